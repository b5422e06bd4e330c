import Testing
@testable import SleepCycleBus

@Suite struct EventBusTests {
    @Test func deliversInFIFOOrderToEverySubscriberBeforeTheNextEvent() {
        let bus = EventBus()
        var log: [String] = []
        bus.subscribe { event in
            guard case .gap(let g) = event else { return [] }
            log.append("A\(g.start)")
            // Publishing from a handler: queued behind the current event, not delivered re-entrantly.
            return g.start == 0 ? [.gap(AudioGap(start: 100, length: 1, reason: .late))] : []
        }
        bus.subscribe { event in
            if case .gap(let g) = event { log.append("B\(g.start)") }
            return []
        }
        bus.publish(.gap(AudioGap(start: 0, length: 1, reason: .late)))
        bus.publish(.gap(AudioGap(start: 1, length: 1, reason: .late)))
        #expect(log == ["A0", "B0", "A100", "B100", "A1", "B1"])
        #expect(bus.deliveredCount == 3)
    }
}
