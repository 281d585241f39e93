#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Body text in the charset a `Content-Type` names (``Response/string``).
enum CharsetDecoding {
    /// `data` decoded as `charset` (a lowercased label; nil: UTF-8), or nil when it is not
    /// valid in it. A charset this does not decode gives the text only when the bytes are
    /// ASCII, which every such charset on the web (`shift_jis`, `euc-kr`, `koi8-r`, …) reads
    /// alike; otherwise nil rather than a guess.
    ///
    /// A byte-order mark for UTF-8 or UTF-16 comes first and is not part of the text: it names
    /// the encoding whatever the label says (as the WHATWG Encoding Standard decodes), but for a
    /// UTF-32 label, whose own mark starts as UTF-16's does.
    static func decode(_ data: Data, charset: String?) -> String? {
        if charset?.hasPrefix("utf-32") != true, let (marked, length) = byteOrderMark(data) {
            return decode(data.dropFirst(length), charset: marked)
        }
        if charset?.hasPrefix("utf-32") == true {
            // UTF-32's own mark, dropped too (Foundation's decoder keeps it as U+FEFF).
            if data.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return decode(data.dropFirst(4), charset: "utf-32le") }
            if data.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return decode(data.dropFirst(4), charset: "utf-32be") }
        }
        switch charset {
        case nil, "utf-8", "utf8", "unicode-1-1-utf-8":
            return String(validating: data, as: UTF8.self)
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1":
            return String(data: data, encoding: .isoLatin1)
        case "us-ascii", "ascii":
            return data.allSatisfy { $0 < 0x80 } ? String(decoding: data, as: UTF8.self) : nil
        case "windows-1252", "cp1252", "x-cp1252":
            return windows1252(data)
        case "utf-16":
            return String(data: data, encoding: .utf16)
        case "utf-16le":
            return String(data: data, encoding: .utf16LittleEndian)
        case "utf-16be":
            return String(data: data, encoding: .utf16BigEndian)
        case "utf-32":
            return String(data: data, encoding: .utf32)
        case "utf-32le":
            return String(data: data, encoding: .utf32LittleEndian)
        case "utf-32be":
            return String(data: data, encoding: .utf32BigEndian)
        default:
            // ESC starts ISO-2022's shifts: ASCII bytes that are not ASCII text.
            return data.allSatisfy { $0 < 0x80 && $0 != 0x1B } ? String(decoding: data, as: UTF8.self) : nil
        }
    }

    /// The encoding a byte-order mark at the start names, and its length.
    private static func byteOrderMark(_ data: Data) -> (charset: String, length: Int)? {
        let start = data.prefix(3)
        if start.elementsEqual([0xEF, 0xBB, 0xBF]) { return ("utf-8", 3) }
        if start.starts(with: [0xFE, 0xFF]) { return ("utf-16be", 2) }
        if start.starts(with: [0xFF, 0xFE]) { return ("utf-16le", 2) }
        return nil
    }

    /// Windows-1252 as the WHATWG Encoding Standard decodes it: Latin-1, except 0x80-0x9F,
    /// most of which are punctuation and letters (the five it leaves undefined stay C1 controls).
    static func windows1252(_ data: Data) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.reserveCapacity(data.count)
        for byte in data {
            let value = (0x80...0x9F).contains(byte) ? high[Int(byte) - 0x80] : UInt32(byte)
            scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
        }
        return String(scalars)
    }

    /// The code points of bytes 0x80-0x9F in Windows-1252.
    private static let high: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D,
        0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0x009D, 0x017E, 0x0178,
    ]
}
