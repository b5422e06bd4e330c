import Testing
@testable import SleepCycleBus

@Suite struct ObserverStreamTests {
    @Test func anObserverThatNeverReadsKeepsABoundedBufferAndCountsEveryDrop() async {
        let stream = ObserverStream<Int>(capacity: 8)
        for i in 0..<100_000 { stream.yield(i) }
        #expect(stream.yieldedCount == 100_000)
        #expect(stream.droppedCount == 100_000 - 8)
        stream.finish()
        // What is left are the 8 NEWEST items: the oldest were dropped.
        var left: [Int] = []
        for await v in stream { left.append(v) }
        #expect(left == Array(99_992..<100_000))
    }

    @Test func aReadingObserverLosesNothingWhenItKeepsUp() async {
        let stream = ObserverStream<Int>(capacity: 4)
        var got: [Int] = []
        var iterator = stream.makeAsyncIterator()
        for i in 0..<100 {
            stream.yield(i)
            if let v = await iterator.next() { got.append(v) }
        }
        #expect(got == Array(0..<100))
        #expect(stream.droppedCount == 0)
    }

    @Test func fanOutGivesEachObserverItsOwnBufferAndDropCount() async {
        let fan = ObserverFanOut<Int>(capacity: 3)
        #expect(!fan.hasObservers)
        let slow = fan.makeStream()
        let fast = fan.makeStream()
        var fastIterator = fast.makeAsyncIterator()
        var fastGot: [Int] = []
        for i in 0..<10 {
            fan.yield(i)
            if let v = await fastIterator.next() { fastGot.append(v) }
        }
        #expect(fastGot == Array(0..<10))
        #expect(fast.droppedCount == 0)
        #expect(slow.droppedCount == 7)
        #expect(fan.droppedCount == 7)
        fan.finish()
        var slowGot: [Int] = []
        for await v in slow { slowGot.append(v) }
        #expect(slowGot == [7, 8, 9])
        // A stream made after finish() is already finished.
        var late: [Int] = []
        for await v in fan.makeStream() { late.append(v) }
        #expect(late.isEmpty)
    }

    @Test func yieldingToAnAbandonedStreamReportsTermination() {
        let fan = ObserverFanOut<Int>(capacity: 2)
        do {
            let s = fan.makeStream()
            s.finish()
            #expect(!s.yield(1))
            #expect(s.isTerminated)
        }
        fan.yield(2)          // forgets the terminated stream
        #expect(!fan.hasObservers)
    }
}

@Suite struct EventBusOrderingTests {
    private func gap(_ t: SampleTime) -> AnalysisEvent { .gap(AudioGap(start: t, length: 1, reason: .late)) }
    private func time(_ e: AnalysisEvent) -> SampleTime? { if case .gap(let g) = e { g.start } else { nil } }

    @Test func reentrantPublishingFromSeveralLevelsKeepsFIFOOrder() {
        let bus = EventBus()
        var log: [String] = []
        // A: on 0 publishes 10 and 20; on 10 publishes 11 (a second level of re-entrancy).
        bus.subscribe { [self] e in
            guard let t = time(e) else { return [] }
            log.append("A\(t)")
            switch t {
            case 0: return [gap(10), gap(20)]
            case 10: return [gap(11)]
            default: return []
            }
        }
        // B publishes from inside its handler with bus.publish (not by returning): still queued, not nested.
        bus.subscribe { [self] e in
            guard let t = time(e) else { return [] }
            log.append("B\(t)")
            if t == 0 { bus.publish(gap(30)) }
            return []
        }
        bus.observe { [self] e in if let t = time(e) { log.append("C\(t)") } }
        bus.publish(gap(0))
        #expect(log == ["A0", "B0", "C0", "A10", "B10", "C10", "A20", "B20", "C20", "A30", "B30", "C30",
                        "A11", "B11", "C11"])
        #expect(bus.deliveredCount == 5)
    }

    @Test func valueConsumersKeepTheirStateAcrossEvents() {
        struct Counter: AnalysisConsumer {
            var n = 0
            mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
                n += 1
                return n == 3 ? [.sessionEnded(at: SampleTime(n))] : []
            }
        }
        let bus = EventBus()
        var ended: [SampleTime] = []
        bus.subscribe(Counter())
        bus.observe { if case .sessionEnded(let t) = $0 { ended.append(t) } }
        for i in 0..<3 { bus.publish(.sessionEnding(at: SampleTime(i))) }
        #expect(ended == [3])
    }
}

@Suite struct ObserverFanOutSessionTests {
    @Test func finishingCurrentStreamsLeavesTheFanOutOpenForLaterObservers() async {
        let fan = ObserverFanOut<Int>(capacity: 4)
        let first = fan.makeStream()
        fan.yield(1)
        fan.finishCurrentStreams()
        var got: [Int] = []
        for await v in first { got.append(v) }
        #expect(got == [1])
        let second = fan.makeStream()
        fan.yield(2)
        fan.finishCurrentStreams()
        got.removeAll()
        for await v in second { got.append(v) }
        #expect(got == [2])
    }
}
