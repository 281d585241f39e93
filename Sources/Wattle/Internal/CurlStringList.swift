import CCurl

/// Builds libcurl string lists (`curl_slist`) all or nothing.
///
/// `curl_slist_append` returns nil when it cannot allocate, and the list built so far is then
/// lost to a caller that keeps only the result: a header list would go out without its
/// headers (`Authorization` among them), a host-override list would leave names to DNS.
enum CurlStringList {
    /// libcurl could not allocate a line of the list.
    struct AllocationFailed: Error {}

    /// A list of `lines` in order, nil for none. When a line cannot be added, what was built
    /// is freed and this throws.
    ///
    /// - Parameter append: `curl_slist_append`, replaced only by tests.
    static func make(
        _ lines: some Sequence<String>,
        append: (UnsafeMutablePointer<curl_slist>?, String) -> UnsafeMutablePointer<curl_slist>? = {
            curl_slist_append($0, $1)
        }
    ) throws(AllocationFailed) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let longer = append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw AllocationFailed()
            }
            list = longer
        }
        return list
    }
}
