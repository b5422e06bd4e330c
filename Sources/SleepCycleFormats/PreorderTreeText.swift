/// One decision tree as the training scripts write it, in the event detector's and the staging model's files: its
/// nodes in pre-order, separated by spaces; a split written `x<feature><=<threshold>:<index of its right child>` (its
/// left child is the next node), a leaf written as its output, e.g. `x3<=0.25:4 x7<=-1.5:3 0.1 -0.2 0.3`. Numbers
/// read back exactly in the caller's type: `Float` for the event detector's float32 thresholds and leaves, `Double`
/// for staging's Python `repr` doubles, both correctly rounded (`exactDecimal`, else the standard library's
/// locale-independent conversion).
public enum PreorderTreeText {
    public struct Node<Number: BinaryFloatingPoint & Sendable>: Sendable, Equatable {
        /// The split's feature index (0 for a leaf).
        public var feature: Int
        /// A split's threshold (`x[feature] ≤ number` goes left), a leaf's output.
        public var number: Number
        /// The index of a split's right child in the tree; 0 for a leaf.
        public var right: Int
        public var isLeaf: Bool { right == 0 }

        @inlinable public init(feature: Int, number: Number, right: Int) {
            self.feature = feature; self.number = number; self.right = right
        }
    }

    /// Parses one tree; nil unless every token is well formed, every feature index is below `featureCount`, every
    /// number is finite and every split's children both lie inside the tree after it (so every walk from the root
    /// ends at a leaf). Works on the UTF-8 bytes: a model has tens of thousands of tokens, and `String.split` with
    /// `Character` indexing and `range(of:)` cost several times what reading the numbers does (the staging model
    /// took ~65 ms to load that way). Public and inlinable so that each caller's `Number` is specialised (with
    /// `package` access it was not, and ran generic: twice the load time).
    @inlinable
    public static func parse<Number: BinaryFloatingPoint & LosslessStringConvertible & Sendable>(
        _ text: String, featureCount: Int, as _: Number.Type = Number.self
    ) -> [Node<Number>]? {
        var text = text
        return text.withUTF8 { bytes -> [Node<Number>]? in
            let space = UInt8(ascii: " ")
            func integer(_ r: Range<Int>) -> Int? {
                guard !r.isEmpty, r.count <= 18 else { return nil }
                var v = 0
                for i in r {
                    let d = bytes[i] &- UInt8(ascii: "0")
                    guard d < 10 else { return nil }
                    v = v * 10 + Int(d)
                }
                return v
            }
            func number(_ r: Range<Int>) -> Number? {
                if let v: Number = exactDecimal(UnsafeBufferPointer(rebasing: bytes[r])) { return v }
                guard !r.isEmpty, let v = Number(String(decoding: UnsafeBufferPointer(rebasing: bytes[r]), as: UTF8.self)),
                      v.isFinite else { return nil }
                return v
            }
            var nodes: [Node<Number>] = []
            // Exactly the tokens (single spaces apart in the scripts' files): the caller may keep this array.
            nodes.reserveCapacity(bytes.reduce(1) { $0 + ($1 == space ? 1 : 0) })
            var i = 0
            while i < bytes.count {
                if bytes[i] == space { i += 1; continue }
                var j = i
                while j < bytes.count, bytes[j] != space { j += 1 }
                if bytes[i] == UInt8(ascii: "x") {
                    var lt = i + 1
                    while lt < j, bytes[lt] != UInt8(ascii: "<") { lt += 1 }
                    var colon = j - 1
                    while colon > lt, bytes[colon] != UInt8(ascii: ":") { colon -= 1 }
                    guard lt + 2 < colon, bytes[lt + 1] == UInt8(ascii: "="),
                          let feature = integer(i + 1..<lt), feature < featureCount,
                          let threshold = number(lt + 2..<colon), let right = integer(colon + 1..<j), right > 0
                    else { return nil }
                    nodes.append(Node(feature: feature, number: threshold, right: right))
                } else {
                    guard let v = number(i..<j) else { return nil }
                    nodes.append(Node(feature: 0, number: v, right: 0))
                }
                i = j
            }
            guard !nodes.isEmpty else { return nil }
            for (i, node) in nodes.enumerated() where !node.isLeaf {
                guard node.right > i + 1, node.right < nodes.count else { return nil }
            }
            return nodes
        }
    }

    /// Powers of ten that a Double holds exactly (10^22 < 2^53 · 2^22).
    @usableFromInline static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]

    /// A plain decimal (`-?digits[.digits][e±digits]`) correctly rounded to `Number`, when one IEEE operation
    /// proves it (Clinger 1990, "How to read floating point numbers accurately", PLDI): a significand m ≤ 2^53 and
    /// an exponent |k| ≤ 22 are both exact in Double, so m · 10^k or m / 10^k is the correctly rounded Double.
    /// Rounding that Double on to a narrower `Number` (Float) is still correct unless it lies exactly halfway between
    /// two `Number` values (then the decimal may lie on either side of that point), or the result is subnormal.
    /// Nil in those cases and for anything else (more digits, a larger exponent, other syntax): the caller then
    /// uses the standard library's conversion. The trees' numbers nearly all take this path, which is several
    /// times cheaper than `strtof`/`strtod`, the largest part of loading a model otherwise.
    @inlinable
    static func exactDecimal<Number: BinaryFloatingPoint>(_ s: UnsafeBufferPointer<UInt8>) -> Number? {
        var i = 0
        let negative = i < s.count && s[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var m: UInt64 = 0, digits = 0, fraction = 0, seenPoint = false, seenDigit = false
        while i < s.count {
            let c = s[i]
            if c == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else if case let d = c &- UInt8(ascii: "0"), d < 10 {
                guard digits < 19 else { return nil }
                seenDigit = true
                if m > 0 || d > 0 { digits += 1 }
                m = m * 10 + UInt64(d)
                if seenPoint { fraction += 1 }
            } else {
                break
            }
            i += 1
        }
        guard seenDigit else { return nil }
        var exponent = 0
        if i < s.count, s[i] == UInt8(ascii: "e") || s[i] == UInt8(ascii: "E") {
            i += 1
            let minus = i < s.count && s[i] == UInt8(ascii: "-")
            if i < s.count, s[i] == UInt8(ascii: "-") || s[i] == UInt8(ascii: "+") { i += 1 }
            let start = i
            while i < s.count, case let d = s[i] &- UInt8(ascii: "0"), d < 10, i - start < 4 {
                exponent = exponent * 10 + Int(d); i += 1
            }
            guard i > start else { return nil }
            if minus { exponent = -exponent }
        }
        guard i == s.count, m <= 1 << 53 else { return nil }
        let k = exponent - fraction
        guard abs(k) <= 22 else { return nil }
        var d = Double(m)
        d = k < 0 ? d / exactPowersOfTen[-k] : d * exactPowersOfTen[k]
        let dropped = Double.significandBitCount - Number.significandBitCount
        if dropped > 0 {
            let low = d.significandBitPattern & ((1 << UInt64(dropped)) - 1)
            guard low != 1 << UInt64(dropped - 1) else { return nil }
        }
        let v = Number(negative ? -d : d)
        guard v.isNormal || v == 0 else { return nil }
        return v
    }
}
