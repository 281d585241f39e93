// libFuzzer target: the keychain's sealed-record decoder (what turns a stored row back into an
// item), through the package-only `FuzzEntryPoints` of WattleKeychain.
//
// Input: a mode byte, then the mode's bytes:
//   0  a row from arbitrary bytes (id, group, attributes blob, secret blob, class, protection):
//      both blobs must fail with `decode`; random bytes never open.
//   1  an attributes plaintext, sealed with the real key so the decoder runs on it: it decodes
//      or fails with `decode`, and what decodes has a canonical encoding that decodes to itself.
//   2  a padded secret, sealed with the real class key: it opens to a prefix of the bytes (the
//      padding removed) or fails with `decode`.
//   3  `meta` table entries: the header decodes or fails with `decode` or `unimplemented`.
//   4  typed value bytes: whatever decodes encodes back to the same bytes.

import WattleFuzzSupport
import WattleKeychain

func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    switch input.byte() % 5 {
    case 0:
        let id = input.field()
        let group = input.field()
        let attributes = input.field()
        let secret = input.field()
        let (secretError, attributesError) = FuzzEntryPoints.openStoredRow(
            id: id, itemClass: input.byte(), group: group, protection: input.byte(), attributes: attributes,
            secret: secret)
        fuzzCheck(secretError == .decode, "a forged secret blob gave \(String(describing: secretError))")
        fuzzCheck(attributesError == .decode, "a forged attributes blob gave \(String(describing: attributesError))")
    case 1:
        let itemClass = input.byte()
        let protection = input.byte() % 3
        switch FuzzEntryPoints.openAuthenticatedAttributes(input.rest(), itemClass: itemClass, protection: protection) {
        case .success(let result):
            fuzzCheck(result.stable, "attributes whose canonical encoding decodes differently: \(result.canonical)")
        case .failure(let error):
            fuzzCheck(error == .decode, "attributes plaintext failed with \(error)")
        }
    case 2:
        let protection = input.byte() % 3
        let padded = input.rest()
        switch FuzzEntryPoints.openAuthenticatedSecret(padded, protection: protection) {
        case .success(let data):
            fuzzCheck(
                protection < 2 && !padded.isEmpty && padded.count % 64 == 0 && data.count < padded.count
                    && data == Array(padded.prefix(data.count)),
                "a secret of \(padded.count) bytes opened to \(data.count) bytes")
        case .failure(let error):
            fuzzCheck(error == .decode, "a padded secret failed with \(error)")
        }
    case 3:
        var meta: [String: [UInt8]] = [:]
        while !input.isAtEnd, meta.count < 12 { meta[input.text()] = input.field() }
        let error = FuzzEntryPoints.decodeHeader(meta)
        fuzzCheck(error == nil || error == .decode || error == .unimplemented, "a header failed with \(error!)")
    default:
        let broken = FuzzEntryPoints.valueEncodingsThatDoNotRoundTrip(input.rest())
        fuzzCheck(broken.isEmpty, "value encodings that do not round-trip: \(broken)")
    }
}

@main enum FuzzSealedRecordMain {
    static func main() {
        FuzzMain.run(name: "FuzzSealedRecord") { data, size in
            fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        }
    }
}
