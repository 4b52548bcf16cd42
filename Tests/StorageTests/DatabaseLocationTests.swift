import Storage
import Testing

@Suite struct DatabaseLocationTests {
    @Test func theXDGDataHomeIsUsedWhenSetAndAbsolute() {
        let path = DatabaseLocation.path(environment: ["HOME": "/home/ann", "XDG_DATA_HOME": "/data/ann"])
        #expect(path == "/data/ann/hostscope/hostscope.sqlite")
    }

    @Test func withoutXDGDataHomeTheDatabaseLivesUnderLocalShare() {
        #expect(
            DatabaseLocation.path(environment: ["HOME": "/home/ann"])
                == "/home/ann/.local/share/hostscope/hostscope.sqlite")
        // The XDG specification says a relative value is invalid and must be ignored.
        #expect(
            DatabaseLocation.path(environment: ["HOME": "/home/ann", "XDG_DATA_HOME": "data"])
                == "/home/ann/.local/share/hostscope/hostscope.sqlite")
        #expect(
            DatabaseLocation.path(environment: ["HOME": "/home/ann", "XDG_DATA_HOME": ""])
                == "/home/ann/.local/share/hostscope/hostscope.sqlite")
    }

    @Test func dbWinsOverHostscopeDBWhichWinsOverXDG() {
        let environment = ["HOME": "/home/ann", "XDG_DATA_HOME": "/data", "HOSTSCOPE_DB": "/var/lib/hs.sqlite"]
        #expect(DatabaseLocation.path(environment: environment) == "/var/lib/hs.sqlite")
        #expect(DatabaseLocation.path(explicit: "fleet.sqlite", environment: environment) == "fleet.sqlite")
        #expect(DatabaseLocation.path(explicit: "", environment: environment) == "/var/lib/hs.sqlite")
    }

    @Test func aLeadingTildeIsExpandedAgainstHome() {
        #expect(
            DatabaseLocation.path(explicit: "~/x.sqlite", environment: ["HOME": "/home/ann"]) == "/home/ann/x.sqlite")
        #expect(
            DatabaseLocation.path(environment: ["HOME": "/home/ann", "HOSTSCOPE_DB": "~/db/h.sqlite"])
                == "/home/ann/db/h.sqlite")
        #expect(DatabaseLocation.path(explicit: "a~/x", environment: ["HOME": "/home/ann"]) == "a~/x")
    }

    @Test func theHomeDirectoryArgumentStandsInForAMissingHOME() {
        #expect(
            DatabaseLocation.path(environment: [:], homeDirectory: "/root")
                == "/root/.local/share/hostscope/hostscope.sqlite")
    }
}
