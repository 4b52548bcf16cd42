import Foundation

/// The harness this process drives, named by `HOSTSCOPE_FUZZ_HARNESS` (read once, before the first input).
let selectedHarness: Harness = {
    let name = getenv("HOSTSCOPE_FUZZ_HARNESS").map { String(cString: $0) } ?? ""
    if name == "list" {
        for harness in Harness.all { print(harness.name) }
        exit(0)
    }
    guard let harness = Harness.named(name) else {
        let names = Harness.all.map(\.name).joined(separator: " ")
        FileHandle.standardError.write(Data("set HOSTSCOPE_FUZZ_HARNESS to one of: \(names) (or list)\n".utf8))
        exit(2)
    }
    return harness
}()

/// libFuzzer's set-up hook: resolves the harness before fuzzing starts, so a wrong name fails at once.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    _ = selectedHarness
    return 0
}

/// libFuzzer's entry point: one input, one run of the selected harness.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    selectedHarness.run(bytes)
    return 0
}
