import MetricsFixture
import ProtobufPeer
import WeavePrometheus

/// The protobuf exposition of a fixture's families: WeavePrometheus's hand-written encoder and
/// parser against swift-protobuf's generated messages, and the text format beside them.
enum ProtobufBenchmark {
    struct Row {
        let name: String
        let millis: Double
        let bytes: Int
    }

    static func run(keys: Int) throws -> [Row] {
        let families = MetricsFixture(services: keys).families()
        // swift-protobuf's peer writes families as given: one per name, as `ProtobufExposition` groups them.
        var grouped: [MetricFamily] = []
        for family in families.sorted(by: { $0.name < $1.name }) {
            if grouped.last?.name == family.name {
                grouped[grouped.count - 1].samples += family.samples
                grouped[grouped.count - 1].histograms += family.histograms
            } else {
                grouped.append(family)
            }
        }
        let ours = ProtobufExposition.render(families)
        let theirs = try SwiftProtobufExposition.render(grouped)
        return [
            Row(name: "text format render (`Exposition`)", millis: try median { Exposition.render(families, format: .prometheusText).count },
                bytes: Exposition.render(families, format: .prometheusText).count),
            Row(name: "protobuf render, hand-written (`ProtobufExposition`)", millis: try median { ProtobufExposition.render(families).count },
                bytes: ours.count),
            Row(name: "protobuf render, swift-protobuf 1.39 (generated messages)", millis: try median { try SwiftProtobufExposition.render(grouped).count },
                bytes: theirs.count),
            Row(name: "protobuf parse, hand-written and validated (`ProtobufParser`)", millis: try median { try ProtobufParser.parse(ours).count },
                bytes: ours.count),
            Row(name: "protobuf parse, swift-protobuf 1.39 (no validation)", millis: try median { try SwiftProtobufExposition.parse(ours).count },
                bytes: ours.count),
        ]
    }

    private static func median(_ body: () throws -> Int) throws -> Double {
        var samples: [Double] = []
        for _ in 0..<31 {
            var error: (any Error)?
            let took = Harness.elapsed {
                do { blackHole(try body()) } catch let failure { error = failure }
            }
            if let error { throw error }
            samples.append(Harness.nanos(took) / 1e6)
        }
        return samples.sorted()[samples.count / 2]
    }
}
