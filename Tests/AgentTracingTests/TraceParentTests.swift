import AgentTracing
import Testing
import Tracing

@Suite struct TraceParentTests {
    @Test func theW3CExampleParses() throws {
        let context = try #require(TraceParent.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        #expect(context.traceID.hex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.spanID.hex == "00f067aa0ba902b7")
        #expect(context.traceFlags == 1)
        #expect(context.isRemote)
        #expect(TraceParent.headerValue(for: context) == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    }

    @Test(arguments: [
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "",
    ])
    func malformedHeadersAreIgnored(value: String) {
        #expect(TraceParent.parse(value) == nil)
    }

    @Test func aLaterVersionIsReadByItsVersionZeroPrefix() throws {
        let context = try #require(TraceParent.parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what"))
        #expect(context.traceFlags == 9)
        #expect(TraceParent.parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09x") == nil)
    }

    @Test func surroundingBlanksAreTolerated() {
        #expect(TraceParent.parse("  00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\t") != nil)
    }
}
