/// The protocol-buffer wire format, the part the Prometheus exposition uses: varints, zigzag
/// integers, doubles and length-delimited fields (strings, messages, packed numbers).
enum ProtobufWire {
    /// The wire types.
    static let varint = 0, fixed64 = 1, delimited = 2, fixed32 = 5

    /// Appends fields to a buffer; a nested message is written in place and its length put in front.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func tag(_ field: Int, _ wireType: Int) { varint(UInt64(field << 3 | wireType)) }

        mutating func uint64(_ field: Int, _ value: UInt64) {
            tag(field, ProtobufWire.varint)
            varint(value)
        }

        mutating func sint(_ field: Int, _ value: Int64) {
            tag(field, ProtobufWire.varint)
            varint(ProtobufWire.zigzag(value))
        }

        mutating func double(_ field: Int, _ value: Double) {
            tag(field, ProtobufWire.fixed64)
            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func string(_ field: Int, _ value: String) {
            tag(field, ProtobufWire.delimited)
            varint(UInt64(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
        }

        /// A length-delimited field (`field`), or a delimited message of a stream (nil): `body`
        /// writes its content. One byte is kept for the length, and more made room for when the
        /// content is 128 bytes or longer.
        mutating func message(_ field: Int?, _ body: (inout Writer) -> Void) {
            if let field { tag(field, ProtobufWire.delimited) }
            let start = bytes.count
            bytes.append(0)
            body(&self)
            var length = bytes.count - start - 1
            var extra = 0
            while length >> (7 * (extra + 1)) > 0 { extra += 1 }
            if extra > 0 { bytes.insert(contentsOf: repeatElement(0, count: extra), at: start + 1) }
            for index in start...(start + extra) {
                bytes[index] = UInt8(truncatingIfNeeded: length) | (index < start + extra ? 0x80 : 0)
                length >>= 7
            }
        }
    }

    /// Reads fields out of a buffer; every length is checked against what is left.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            offset = 0
        }

        var isAtEnd: Bool { offset >= bytes.count }

        mutating func varint() throws(WireFailure) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count, shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw WireFailure("a varint runs past its message or past 64 bits")
        }

        /// The next field's number and wire type.
        mutating func tag() throws(WireFailure) -> (field: Int, wireType: Int) {
            let key = try varint()
            guard key >> 3 > 0, key >> 3 < 1 << 29 else { throw WireFailure("a field number of 0 or above 2^29") }
            return (Int(key >> 3), Int(key & 7))
        }

        mutating func fixed64() throws(WireFailure) -> UInt64 {
            guard bytes.count - offset >= 8 else { throw WireFailure("a 64-bit field runs past its message") }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
            offset += 8
            return value
        }

        mutating func double() throws(WireFailure) -> Double { Double(bitPattern: try fixed64()) }

        /// A length-delimited field's bytes.
        mutating func delimited() throws(WireFailure) -> UnsafeRawBufferPointer {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw WireFailure("a length of \(length) bytes runs past its message") }
            let part = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(length)])
            offset += Int(length)
            return part
        }

        /// Passes over a field of `wireType` that is not read.
        mutating func skip(_ wireType: Int) throws(WireFailure) {
            switch wireType {
            case ProtobufWire.varint: _ = try varint()
            case ProtobufWire.fixed64: _ = try fixed64()
            case ProtobufWire.delimited: _ = try delimited()
            case ProtobufWire.fixed32:
                guard bytes.count - offset >= 4 else { throw WireFailure("a 32-bit field runs past its message") }
                offset += 4
            default: throw WireFailure("wire type \(wireType) is not one of 0, 1, 2 and 5")
            }
        }

        /// Reads the message in `bytes` field by field: `read` gets each field's number and wire type
        /// and reads its value from the reader, or returns false for a field it does not read,
        /// which is then passed over.
        static func fields(of bytes: UnsafeRawBufferPointer,
                           _ read: (_ field: Int, _ wireType: Int, _ reader: inout Reader) throws(WireFailure) -> Bool) throws(WireFailure) {
            var reader = Reader(bytes)
            while !reader.isAtEnd {
                let (field, wireType) = try reader.tag()
                if try !read(field, wireType, &reader) { try reader.skip(wireType) }
            }
        }

        /// How many numbers the field `varints` reads next holds (its last byte of each), without
        /// reading it.
        func varintCount(_ wireType: Int) throws(WireFailure) -> Int {
            guard wireType == ProtobufWire.delimited else { return 1 }
            var copy = self
            let packed = try copy.delimited()
            return packed.reduce(0) { $0 + ($1 & 0x80 == 0 ? 1 : 0) }
        }

        /// The values of a repeated varint field, packed (`wireType` 2) or one (0).
        mutating func varints(_ wireType: Int) throws(WireFailure) -> [UInt64] {
            guard wireType == ProtobufWire.delimited else {
                guard wireType == ProtobufWire.varint else { throw WireFailure("a number field of wire type \(wireType)") }
                return [try varint()]
            }
            var packed = Reader(try delimited())
            var values: [UInt64] = []
            while !packed.isAtEnd { values.append(try packed.varint()) }
            return values
        }
    }

    /// Why bytes are not a valid message, or (`outOfRoom`) why reading them stopped.
    struct WireFailure: Error {
        let message: String
        var outOfRoom = false
        init(_ message: String) { self.message = message }

        /// The room the reader was allowed is taken.
        static var outOfRoom: WireFailure {
            var failure = WireFailure("its families need more room than is left")
            failure.outOfRoom = true
            return failure
        }
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
}
