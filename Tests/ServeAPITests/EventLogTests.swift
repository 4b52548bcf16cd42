import ServeAPI
import Testing

@Suite struct EventLogTests {
    @Test func aClientReadsEveryEventAfterItsPlaceInOrder() {
        let log = EventLog(capacity: 8, epoch: "100")
        for index in 1...5 { log.append("record", data: "{\"n\":\(index)}") }
        let reading = log.read(after: 2)
        #expect(reading.events.map(\.sequence) == [3, 4, 5])
        #expect(!reading.gap)
        #expect(reading.position == 5)
        #expect(log.read(after: 5).events.isEmpty)
    }

    @Test func aClientFurtherBehindThanTheLogHoldsIsToldOfTheGap() {
        let log = EventLog(capacity: 4, epoch: "100")
        for index in 1...10 { log.append("record", data: "\(index)") }
        let reading = log.read(after: 2)
        #expect(reading.gap)
        #expect(reading.events.map(\.sequence) == [7, 8, 9, 10])
        #expect(reading.events.map(\.data) == ["7", "8", "9", "10"])
        // Exactly at the edge: event 6 was the last it saw, 7 is the oldest kept.
        #expect(!log.read(after: 6).gap)
    }

    @Test func lastEventIDResumesOnlyWithinThisProcessesLog() {
        let log = EventLog(capacity: 4, epoch: "100")
        for index in 1...3 { log.append("record", data: "\(index)") }
        #expect(log.resumePosition(lastEventID: "100-2") == (2, false))
        #expect(log.resumePosition(lastEventID: nil) == (3, false))
        // Another process's id, an id from the future, and nonsense all start fresh and report a gap.
        #expect(log.resumePosition(lastEventID: "99-2") == (3, true))
        #expect(log.resumePosition(lastEventID: "100-9") == (3, true))
        #expect(log.resumePosition(lastEventID: "garbage") == (3, true))
    }

    @Test func eventsAreFramedWithTheirEpochAndName() {
        let event = ServerSentEvent(sequence: 7, name: "host_state", data: "{\"host\":\"web1\"}")
        #expect(event.framed(epoch: "42") == "id: 42-7\nevent: host_state\ndata: {\"host\":\"web1\"}\n\n")
    }

    @Test func finishingTheLogEndsEveryDoorbell() async {
        let log = EventLog(capacity: 4)
        let (_, doorbell) = log.subscribe()
        #expect(log.subscriberCount == 1)
        log.append("record", data: "1")
        log.finish()
        var rings = 0
        for await _ in doorbell { rings += 1 }
        #expect(rings == 1)
        let (_, late) = log.subscribe()
        for await _ in late { Issue.record("a subscription after finish must end at once") }
    }
}
