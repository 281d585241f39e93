import Foundation
import Testing

@testable import Wattle

@Suite("JSONWriter's check for the bare NaN JSONEncoder writes for Decimal.nan")
struct JSONWriterTests {
    @Test("a NaN token outside strings is found; NaN inside strings, after escapes, is not")
    func bareNaN() {
        let bare = [#"NaN"#, #"{"d":NaN}"#, #"[1,NaN]"#, #"{"a":"x\\","d":NaN}"#, #"{"a":"\"","b":[NaN]}"#]
        for text in bare { #expect(JSONWriter.hasBareNaN(Data(text.utf8)), "\(text)") }
        let quoted = [
            #""NaN""#, #"{"NaN":"NaN"}"#, #"{"a":"\"NaN\""}"#, #"{"a":"x\\","b":"NaN"}"#, #"{"a":"\\\"NaN"}"#,
            #"{"a":1}"#, "", #"Na"#, #"{"a":"Na","b":"N"}"#,
        ]
        for text in quoted { #expect(!JSONWriter.hasBareNaN(Data(text.utf8)), "\(text)") }
    }
}
