/// One sample line, decoded: its whole name (the family's and any suffix, `_bucket`, `_total`),
/// its labels and its value. For programs that read figures out of an exposition (`weave-health
/// top`) after `ExpositionParser` has checked it.
public struct ExpositionSample: Sendable, Equatable {
    public var name: String
    public var labels: [String: String]
    public var value: Double

    public init(name: String, labels: [String: String] = [:], value: Double) {
        self.name = name
        self.labels = labels
        self.value = value
    }
}

extension PreformattedLines {
    /// The lines, decoded. Lines `ExpositionParser` accepted each have a name, a well-formed label
    /// set and a value; a line made otherwise that lacks one is skipped. A timestamp or an exemplar
    /// after the value is ignored.
    public var samples: [ExpositionSample] {
        withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var samples: [ExpositionSample] = []
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                if let sample = Self.decode(UnsafeBufferPointer(rebasing: bytes[start..<end])) { samples.append(sample) }
                start = end + 1
            }
            return samples
        }
    }

    private static func decode(_ line: UnsafeBufferPointer<UInt8>) -> ExpositionSample? {
        var index = 0
        while index < line.count, line[index] != UInt8(ascii: "{"), line[index] != UInt8(ascii: " ") { index += 1 }
        var sample = ExpositionSample(name: String(decoding: UnsafeBufferPointer(rebasing: line[..<index]), as: UTF8.self), value: 0)
        if index < line.count, line[index] == UInt8(ascii: "{") {
            index += 1
            while index < line.count, line[index] != UInt8(ascii: "}") {
                let nameStart = index
                while index < line.count, line[index] != UInt8(ascii: "=") { index += 1 }
                let name = String(decoding: UnsafeBufferPointer(rebasing: line[nameStart..<index]), as: UTF8.self)
                index += 2 // `="`
                var value: [UInt8] = []
                while index < line.count, line[index] != UInt8(ascii: "\"") {
                    if line[index] == UInt8(ascii: "\\"), index + 1 < line.count {
                        index += 1
                        value.append(line[index] == UInt8(ascii: "n") ? UInt8(ascii: "\n") : line[index])
                    } else {
                        value.append(line[index])
                    }
                    index += 1
                }
                guard index < line.count else { return nil }
                sample.labels[name] = String(decoding: value, as: UTF8.self)
                index += 1
                if index < line.count, line[index] == UInt8(ascii: ",") { index += 1 }
            }
            guard index < line.count else { return nil } // no `}`
            index += 1
        }
        while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
        var end = index
        while end < line.count, line[end] != UInt8(ascii: " ") { end += 1 }
        guard let value = SeriesRules.number(UnsafeBufferPointer(rebasing: line[index..<end])) else { return nil }
        sample.value = value
        return sample
    }
}
