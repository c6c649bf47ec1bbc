/// Where bytes stop being valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF). What another process sends is checked with it before it is passed on: a Prometheus
/// server rejects a whole scrape for one label value that is not UTF-8.
public enum UTF8Validation {
    /// The offset of the first byte that is not part of a valid UTF-8 sequence, or nil when all of
    /// `bytes` is valid. ASCII is checked eight bytes at a time.
    public static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var index = 0
        while index < count {
            while index + 8 <= count,
                  UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index += 8
            }
            guard index < count else { return nil }
            let lead = base[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // The sequence's length, and the range its second byte must be in (which rules out
            // overlong forms, surrogates and code points above U+10FFFF).
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; second = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; second = 0x80...0x9F
            case 0xF0: length = 4; second = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; second = 0x80...0x8F
            default: return index
            }
            guard index + length <= count, second.contains(base[index + 1]) else { return index }
            for offset in 2..<length where base[index + offset] & 0xC0 != 0x80 { return index }
            index += length
        }
        return nil
    }
}
