/// Fixed-point text for numbers shown to people (progress, timings), without `String(format:)`,
/// which needs all of Foundation.
public enum Decimals {
    /// `value` rounded to `places` decimal places: `Decimals.string(3.14159, places: 2)` is
    /// `"3.14"`, `Decimals.string(2.5, places: 0)` is `"3"` (half away from zero). Not finite: `"-"`.
    public static func string(_ value: Double, places: Int) -> String {
        let places = max(0, min(places, 9))
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
        guard value.isFinite, scaled < 9.0e18 else { return "-" }
        let units = Int64(scaled)
        let divisor = Int64(scale)
        let sign = value < 0 && units != 0 ? "-" : ""
        guard places > 0 else { return sign + "\(units)" }
        let fraction = String(units % divisor)
        return sign + "\(units / divisor)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
