import Foundation
import Testing
import WattleCLIKit

@Suite("CLI items and JSON printing")
struct CLIKitTests {
    @Test("items: the earliest separator wins, the longest at that position; backslash escapes")
    func items() throws {
        #expect(try RequestItem.parse("q==a=b") == .query("q", "a=b"))
        #expect(try RequestItem.parse("n:=[1,2]") == .jsonField("n", "[1,2]"))
        #expect(try RequestItem.parse("name=a:b") == .stringField("name", "a:b"))
        #expect(try RequestItem.parse("Accept: text/html") == .header("Accept", "text/html"))
        #expect(try RequestItem.parse("url=http://x") == .stringField("url", "http://x"))
        #expect(try RequestItem.parse(#"a\=b=c"#) == .stringField("a=b", "c"))
        #expect(try RequestItem.parse("empty=") == .stringField("empty", ""))
        #expect(throws: RequestItemError.self) { try RequestItem.parse("=value") }
        #expect(throws: RequestItemError.self) { try RequestItem.parse("plainword") }
    }

    @Test(
        "URL shorthands as httpie has them: :PORT/path is localhost, a host without a scheme is http:// unless a base URL is set"
    )
    func endpointShorthand() {
        func expanded(_ word: String, base: Bool = false) -> String {
            EndpointShorthand.expanded(word, hasBaseURL: base)
        }
        #expect(expanded(":3000/users") == "http://localhost:3000/users")
        #expect(expanded(":/users?q=1", base: true) == "http://localhost/users?q=1")
        #expect(expanded(":") == "http://localhost" && expanded(":8080") == "http://localhost:8080")
        #expect(expanded(":id") == ":id" && expanded("::1") == "::1")
        #expect(expanded("localhost:8080/echo") == "http://localhost:8080/echo")
        #expect(expanded("api.example.test/cb?next=https://x/") == "http://api.example.test/cb?next=https://x/")
        #expect(expanded("users/42", base: true) == "users/42" && expanded("users/42") == "users/42")
        #expect(expanded("localhost/x") == "http://localhost/x" && expanded("intranet:81") == "http://intranet:81")
        for standing in [
            "https://h/x", "HTTP://h", "/users", "alice:pw@host/me", "nginx:1.25@sha256:ab/json", "",
            "file:/etc/passwd",
            "http:/api.test/x", "mailto:a@b.test", "host:80x/y", "speech:recognize",
        ] {
            #expect(expanded(standing) == standing, "\(standing)")
        }
    }

    @Test("a backslash escapes a separator character in a name or a value, and a backslash in a name; any other stays")
    func escapes() throws {
        #expect(try RequestItem.parse(#"q==a\=b"#) == .query("q", "a=b"))
        #expect(try RequestItem.parse(#"a=x\:y"#) == .stringField("a", "x:y"))
        #expect(try RequestItem.parse(#"H:a\:b"#) == .header("H", "a:b"))
        #expect(try RequestItem.parse(#"j:="a\:b""#) == .jsonField("j", #""a:b""#))
        #expect(try RequestItem.parse(#"a\b=1"#) == .stringField(#"a\b"#, "1"))
        #expect(try RequestItem.parse(#"c\\d=2"#) == .stringField(#"c\d"#, "2"))
        #expect(try RequestItem.parse(#"e=f\\g"#) == .stringField("e", #"f\\g"#))
        #expect(try RequestItem.parse(#"m=\x"#) == .stringField("m", #"\x"#))
        #expect(try RequestItem.parse(#"u\==v"#) == .stringField("u=", "v"))
        #expect(try RequestItem.parse(#"note=@my\:file"#) == .stringFieldFromFile("note", path: "my:file"))
    }

    @Test("headers as httpie has them: Name: removes the header, Name; and Name: with a space send it empty")
    func headerItems() throws {
        #expect(try RequestItem.parse("User-Agent:") == .removedHeader("User-Agent"))
        #expect(try RequestItem.parse("X-Empty;") == .header("X-Empty", ""))
        #expect(try RequestItem.parse("X-Empty: ") == .header("X-Empty", ""))
        #expect(try RequestItem.parse("Cookie:a=1;b=2") == .header("Cookie", "a=1;b=2"))
        #expect(try RequestItem.parse("q==a;b") == .query("q", "a;b"))
        #expect(try RequestItem.parse(#"a\;b=1"#) == .stringField("a;b", "1"))
        #expect(!RequestItem.removedHeader("X").isBody)
        for bad in ["X;foo", "a;b=c", ";"] {
            #expect(throws: RequestItemError.self, "\(bad)") { try RequestItem.parse(bad) }
        }
    }

    @Test(
        "file items, httpie's: name=@file, name:=@file, name@file, @file and @-; an @ after another separator is text")
    func fileItems() throws {
        #expect(try RequestItem.parse("note=@notes/a.txt") == .stringFieldFromFile("note", path: "notes/a.txt"))
        #expect(try RequestItem.parse("data:=@d.json") == .jsonFieldFromFile("data", path: "d.json"))
        #expect(try RequestItem.parse("photo@/tmp/koala.jpg") == .fileUpload("photo", path: "/tmp/koala.jpg"))
        #expect(try RequestItem.parse("@body.xml") == .bodyFile(path: "body.xml"))
        #expect(try RequestItem.parse("@-") == .bodyFile(path: "-"))
        #expect(try RequestItem.parse("email=ada@example.com") == .stringField("email", "ada@example.com"))
        #expect(try RequestItem.parse("q==@home") == .query("q", "@home"))
        #expect(try RequestItem.parse("From:ada@example.com") == .header("From", "ada@example.com"))
        #expect(try RequestItem.parse(#"user\@host=1"#) == .stringField("user@host", "1"))
        #expect(try RequestItem.parse("a=b@c") == .stringField("a", "b@c"))
        #expect(try RequestItem.parse(#"a=\@x"#) == .stringField("a", "@x"), "an escaped @ is text")
        #expect(try RequestItem.parse(#"a:=\@x"#) == .jsonField("a", "@x"))
        #expect(try RequestItem.parse(#"q==\@x"#) == .query("q", "@x"), "escaped as anywhere, as in httpie")
        #expect(RequestItem.bodyFile(path: "x").isBody && RequestItem.fileUpload("a", path: "x").isBody)
        #expect(!RequestItem.query("a", "b").isBody)
        for bad in ["@", "a=@", "a:=@", "a@"] {
            #expect(throws: RequestItemError.self, "\(bad)") { try RequestItem.parse(bad) }
        }
        #expect(throws: RequestItemError.self) { try RequestItem.parse("=@file") }
    }

    @Test(
        "JSON is checked as RFC 8259 has it: no trailing comma, leading zero, NaN, bare control character or bad UTF-8")
    func strictJSON() {
        let valid = [
            "0", "-0.5e+10", "1E3", #""a\u00e9\n""#, "true", " null ", "[]", "{}", #"{"a":[1,{"b":null}],"c":"é"}"#,
            "[1, 2 ,3]", #"{"a" : 1 , "b":2}"#, String(repeating: "[", count: 500) + String(repeating: "]", count: 500),
        ]
        for text in valid { #expect(JSONPrinter.isJSON(Data(text.utf8)), "\(text)") }
        let invalid = [
            "", " ", "[1,]", #"{"a":1,}"#, "[,1]", "[1,,2]", "01", "-", "1.", ".5", "1e", "+1", "NaN", "Infinity",
            "tru", "nul", "'a'", #""a"#, "\"a\u{1}b\"", #""\x""#, #""\u12""#, "{a:1}", #"{"a" 1}"#, "[1] [2]",
            "[1", #"{"a":1"#, "/* */1", String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
        ]
        for text in invalid { #expect(!JSONPrinter.isJSON(Data(text.utf8)), "\(text)") }
        #expect(!JSONPrinter.isJSON(Data([0x22, 0xFF, 0x22])))  // not UTF-8
    }

    @Test("JSON is re-indented in the server's key order, coloured only when asked")
    func prettyJSON() {
        let text = #"{"z":1,"a":[true,null,"x"],"o":{},"s":"a,b:{c}"}"#
        let plain = JSONPrinter.pretty(Data(text.utf8), colours: false)
        #expect(
            plain == """
                {
                  "z": 1,
                  "a": [
                    true,
                    null,
                    "x"
                  ],
                  "o": {},
                  "s": "a,b:{c}"
                }
                """)
        let coloured = JSONPrinter.pretty(Data(text.utf8), colours: true) ?? ""
        #expect(coloured.contains("\u{1B}[34m\"z\"\u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[32m\"x\"\u{1B}[0m"))
        #expect(JSONPrinter.pretty(Data("not json".utf8), colours: false) == nil)
    }

    @Test("marks that join a quote into one character leave strings whole (U+0600 before a closing quote used to trap)")
    func prettyJSONWithJoiningMarks() {
        // U+0600 (a prepended mark) joins the character after it; U+0301 (combining) the one
        // before it. As Characters, each swallowed a quote.
        let text = "{\"k\u{0600}\":\"\u{0301},{\" , \"q\":[\"a\\\"\u{0301}]\", -1.5e3 ,\"\u{0600}\"]}"
        let expected = """
            {
              "k\u{0600}": "\u{0301},{",
              "q": [
                "a\\"\u{0301}]",
                -1.5e3,
                "\u{0600}"
              ]
            }
            """
        #expect(JSONPrinter.pretty(Data(text.utf8), colours: false) == expected)
        let coloured = JSONPrinter.pretty(Data(text.utf8), colours: true) ?? ""
        #expect(coloured.contains("\u{1B}[34m\"k\u{0600}\"\u{1B}[0m: \u{1B}[32m\"\u{0301},{\"\u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[33m-1.5e3\u{1B}[0m"))
    }

    @Test("numbers for people: fixed decimal places, rounded half away from zero")
    func decimals() {
        #expect(Decimals.string(3.14159, places: 2) == "3.14")
        #expect(Decimals.string(2.5, places: 0) == "3")
        #expect(Decimals.string(0.05, places: 1) == "0.1")
        #expect(Decimals.string(12.0, places: 1) == "12.0")
        #expect(Decimals.string(1.005, places: 3) == "1.005")
        #expect(Decimals.string(0.0001, places: 2) == "0.00")
        #expect(Decimals.string(-1.25, places: 1) == "-1.3")
        #expect(Decimals.string(-0.001, places: 1) == "0.0")
        #expect(Decimals.string(99.96, places: 1) == "100.0")
        #expect(Decimals.string(.infinity, places: 1) == "-")
        #expect(Decimals.string(.nan, places: 1) == "-")
    }
}

@Suite("CLI item parsing cost")
struct CLIItemCostTests {
    @Test("a long item without a separator is rejected in linear time (fuzz finding: it was quadratic)")
    func longItem() {
        let start = ContinuousClock.now
        #expect(throws: RequestItemError.self) { try RequestItem.parse(String(repeating: "a", count: 40_000)) }
        // Tripled under a sanitizer (`make sanitize` sets WATTLE_TEST_SANITIZER): 5-15x slower there.
        #expect(ContinuousClock.now - start < .seconds(CLI.underSanitizer ? 15 : 5))
    }
}

@Suite("The secrets of the CLI's command line, found to be hidden from the process list")
struct SecretArgumentsTests {
    /// The secret text of each span, for arguments given as text.
    static func secrets(_ arguments: [String]) -> [String] {
        let bytes = arguments.map { Array($0.utf8) }
        return SecretArguments.spans(in: bytes).map { span in
            String(decoding: bytes[span.argument][span.bytes], as: UTF8.self)
        }
    }

    @Test("--password and --refresh-token, as VALUE or =VALUE; - is no secret")
    func wholeValues() {
        #expect(Self.secrets(["auth", "login", "URL", "--username", "u", "--password", "p w"]) == ["p w"])
        #expect(Self.secrets(["auth", "login", "URL", "--password=p=w", "--username", "u"]) == ["p=w"])
        #expect(Self.secrets(["auth", "set-token", "T", "--refresh-token", "r1"]) == ["r1"])
        #expect(Self.secrets(["auth", "set-token", "-", "--refresh-token", "-"]) == [])
        #expect(Self.secrets(["auth", "set-token", "T", "--refresh-token=r2"]) == ["r2"])
        // A value that looks like an option is still the value.
        #expect(Self.secrets(["--password", "--password"]) == ["--password"])
    }

    @Test("-a and --auth: the part after the first colon, alone or last in a group of short flags")
    func basicCredentials() {
        #expect(Self.secrets(["-a", "alice:pa:ss", "URL"]) == ["pa:ss"])
        #expect(Self.secrets(["--auth", "alice:x", "URL"]) == ["x"])
        #expect(Self.secrets(["--auth=alice:y", "URL"]) == ["y"])
        #expect(Self.secrets(["-va", "alice:z", "URL"]) == ["z"])
        #expect(Self.secrets(["-a", "alice", "URL"]) == [])
        #expect(Self.secrets(["-a", "alice:", "URL"]) == [])
        #expect(Self.secrets(["-v", "alice:z", "URL"]) == [])
        #expect(Self.secrets(["-o", "out", "URL", "name=a:b"]) == [])
        // As ArgumentParser reads them: -a=VALUE, and each flag of a group taking a value in turn.
        #expect(Self.secrets(["-a=alice:eq", "URL"]) == ["eq"])
        #expect(Self.secrets(["-av", "alice:first", "URL"]) == ["first"])
        #expect(Self.secrets(["-oa", "a:file", "alice:second", "URL"]) == ["second"])
        #expect(Self.secrets(["-ao", "alice:third", "a:file", "URL"]) == ["third"])
        #expect(Self.secrets(["--output", "-a", "-a", "alice:fourth"]) == ["fourth"])
        // getopt's attached value, which ArgumentParser refuses, quoting it: a colon is no flag.
        #expect(Self.secrets(["-aalice:fifth", "URL"]) == ["fifth"])
        #expect(Self.secrets(["-vaalice:sixth", "URL"]) == ["sixth"])
        #expect(
            SecretArguments.redacting("Unknown option '-aalice:fifth'", arguments: ["-aalice:fifth", "URL"])
                == "Unknown option '-aalice:*****'")
    }

    @Test("a URL's user-info password, in any argument; after -- nothing is an option")
    func urlUserInfo() {
        #expect(Self.secrets(["https://u:s3@h.test:8443/p?q=a:b@c"]) == ["s3"])
        #expect(Self.secrets(["--proxy=http://u:pw@proxy:3128", "URL"]) == ["pw"])
        #expect(Self.secrets(["--proxy", "u:pv@proxy:3128", "URL"]) == ["pv"])
        // Any other option's =VALUE is read as an operand: --base-url=URL.
        #expect(Self.secrets(["--base-url=https://u:pb@h.test/", "me"]) == ["pb"])
        #expect(Self.secrets(["--timeout=5", "--keychain=/k:x@y"]) == [])
        // An operand is a URL only with its scheme: these are body fields and headers.
        #expect(Self.secrets(["URL", "note=a:b@c", "From:ada:x@example.com"]) == [])
        #expect(Self.secrets(["https://u@h.test/", "https://h.test/a:b@c", "x://u:@h"]) == [])
        #expect(Self.secrets(["https://u:p@ss@h.test/"]) == ["p@ss"])
        // A mistyped scheme still holds a password.
        #expect(
            Self.secrets([
                "https:/u:m1@h.test/x", "HTTP:u:m2@h.test", "https//u:m3@h.test/", "--base-url=http:/u:m4@h/",
            ])
                == ["m1", "m2", "m3", "m4"])
        #expect(Self.secrets(["http:/h.test/a:b@c", "httpx:/u:p@h"]) == [])
        // A "://" in its query starts no authority; three slashes are a mistyped scheme too.
        #expect(
            Self.secrets(["https:/u:m5@h.test/cb?next=https://app.test/", "https:///u:m6@h.test"]) == ["m5", "m6"])
        #expect(Self.secrets(["--", "--password", "https://u:v@h/"]) == ["v"])
        #expect(Self.secrets(["-a", "u:w", "--", "-a", "u:x"]) == ["w"])
    }
}
