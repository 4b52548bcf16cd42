import HostStats
import Testing

@Suite struct FreeParserTests {
    @Test(arguments: [
        "generated/debian12/free_k_and_proc_meminfo.txt", "captured/debian12-local/free_k_and_proc_meminfo.txt",
    ])
    func freeAgreesWithProcMeminfoReadAtTheSameMoment(_ path: String) throws {
        let sections = try FixtureText.sections(path)
        let free = try FreeParser.parse(sections[0]).value
        let meminfo = try ProcMemInfoParser.parse(sections[1])
        #expect(free.totalBytes == meminfo.totalBytes)
        #expect(free.definition == "total-available")
        // A few pages may change hands between the two reads.
        let slack = Double(2 << 20)
        #expect(abs(Double(free.availableBytes!) - Double(meminfo.availableBytes!)) <= slack)
        #expect(abs(Double(free.usedBytes!) - Double(meminfo.usedBytes!)) <= slack)
        // buff/cache = Buffers + Cached + SReclaimable.
        let buffCache = meminfo.buffersBytes! + meminfo.cachedBytes!
        #expect(abs(Double(free.cachedBytes!) - Double(buffCache)) <= slack)
    }

    @Test func wideOutputSplitsBuffersFromCacheAsMeminfoCountsThem() throws {
        let sections = try FixtureText.sections("generated/debian12/free_b_and_proc_meminfo_head.txt")
        let free = try FreeParser.parse(sections[0]).value
        let meminfo = try ProcMemInfoParser.parse(sections[1])
        #expect(free.buffersBytes == meminfo.buffersBytes)
        #expect(free.cachedBytes == meminfo.cachedBytes)
        #expect(free.freeBytes == meminfo.freeBytes)
    }

    @Test func procps4UsedIsTotalMinusAvailable() throws {
        let memory = try FreeParser.parse(FixtureText.read("generated/debian12/free_b.txt")).value
        #expect(memory.definition == "total-available")
        #expect(memory.usedBytes == memory.totalBytes! - memory.availableBytes!)
    }

    @Test func procps3UsedIsTotalMinusFreeMinusBuffCache() throws {
        let memory = try FreeParser.parse(FixtureText.read("generated/debian11-bullseye/free_b.txt")).value
        #expect(memory.definition == "total-free-buff/cache")
        #expect(memory.usedBytes == memory.totalBytes! - memory.freeBytes! - memory.cachedBytes!)
    }

    @Test func busyboxFollowsTheProcps3Formula() throws {
        let memory = try FreeParser.parse(FixtureText.read("generated/busybox-1.35.0/busybox_free.txt")).value
        #expect(memory.definition == "total-free-buff/cache")
        #expect(memory.totalBytes == 24_684_096 * 1024)
    }

    @Test func theUnitIsInferredFromTheFigures() throws {
        let bytes = try FreeParser.parse(FixtureText.read("generated/debian12/free_b.txt")).value
        let kib = try FreeParser.parse(FixtureText.read("generated/debian12/free_k.txt")).value
        let mib = try FreeParser.parse(FixtureText.read("generated/debian12/free_m.txt")).value
        #expect(bytes.totalBytes == kib.totalBytes)
        #expect(abs(Double(mib.totalBytes!) - Double(bytes.totalBytes!)) < Double(1 << 20))
        let forced = try FreeParser.parse(FixtureText.read("generated/debian12/free_m.txt"), unit: .kibibytes)
        #expect(forced.value.totalBytes == 24_105 * 1024)
    }

    @Test func humanReadableOutputDoesNotPretendToKnowTheFormula() throws {
        let parsed = try FreeParser.parse(FixtureText.read("generated/debian12/free_h.txt"))
        #expect(parsed.value.definition == nil)
        #expect(parsed.value.totalBytes == 23 << 30)
        #expect(parsed.value.usedBytes == 446 << 20)
        #expect(parsed.warnings.contains { $0.contains("free -b") })
    }

    @Test func translatedLabelsAndDecimalCommasRead() throws {
        let memory = try FreeParser.parse(FixtureText.read("generated/debian12-de_DE/free_h.txt")).value
        #expect(memory.freeBytes == 22 << 30)
        #expect(memory.cachedBytes == 855 << 20)
        let old = try FreeParser.parse(FixtureText.read("public/linux-procps3.3.10-de_DE/free_m.txt")).value
        #expect(old.totalBytes == 6904 << 20 && old.definition == "total-free-buff/cache")
    }

    @Test func oldProcpsUsesTheBuffersCacheLine() throws {
        let memory = try FreeParser.parse(FixtureText.read("public/linux-debian8-procps3.3.9/free_m.txt")).value
        #expect(memory.usedBytes == 1548 << 20)
        #expect(memory.definition == "total-free-buffers-cached")
        #expect(memory.availableBytes == nil)
        #expect(memory.swapUsedBytes == 74 << 20)
    }

    @Test func oldBusyboxUsesTheBuffersLine() throws {
        let memory = try FreeParser.parse(FixtureText.read("public/busybox-boot2docker-1.4/free.txt")).value
        #expect(memory.usedBytes == 152_216 * 1024)
        #expect(memory.definition == "total-free-buffers")
        #expect(memory.swapTotalBytes == 1_212_036 * 1024)
    }

    @Test func dfOutputIsRejectedAndNamed() {
        #expect {
            try FreeParser.parse(FixtureText.read("generated/debian12/df_kP.txt"))
        } throws: { error in
            let message = (error as? ParseError)?.description ?? ""
            return message.contains("`Mem:`") && message.contains("`df`")
        }
    }
}
