// swift-tools-version: 6.0
// libFuzzer harnesses for hostscope's parsers and decoders, kept out of the main manifest.
// Build and run them with Scripts/fuzz/run.sh; docs/fuzzing.md says what each harness reads.
import PackageDescription

// A package reached by path is known by its folder's name, which is the clone's name, not "hostscope".
let mainPackage = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "hostscope"

let package = Package(
    name: "hostscope-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // One executable: every harness links the same modules, so one instrumented link serves them all.
        // `HOSTSCOPE_FUZZ_HARNESS` names the harness a run drives.
        .executableTarget(
            name: "HostscopeFuzz",
            dependencies: [.product(name: "HostscopeParsers", package: mainPackage)],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])])
    ]
)
