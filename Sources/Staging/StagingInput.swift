import SleepCycleBus

/// The per-epoch inputs of the staging model, named as in Walch et al. 2019 ("Sleep stage prediction with raw
/// acceleration and photoplethysmography heart rate data derived from a consumer wearable device", SLEEP
/// 42(12) zsz180) and in the `sleepcycle stage --epochs` CSV header.
public enum StagingInput: String, Sendable, Hashable, CaseIterable, Codable {
    /// Hours since the first epoch.
    case timeHours = "time_hours"
    /// Activity count (ActiGraph-like counts, Gaussian-smoothed over ±285 s); arbitrary units, z-scored per night.
    case count
    /// Heart-rate variability-like feature (std of the band-passed, normalised heart rate over ±285 s); not bpm.
    case hr
    /// Fixed circadian proxy `-cos(2π(t - t0 - 5 h) / 24 h)`.
    case cosine
    /// Forger circadian-model clock proxy (never available at run time; accepted from CSV only).
    case circadian
}

/// One night of per-epoch inputs (30-s epochs, in order). Absent inputs are simply missing from `columns`.
public struct EpochTable: Sendable, Equatable {
    public private(set) var columns: [StagingInput: [Double]]
    public let count: Int

    /// - Precondition: every column has the same length.
    public init(columns: [StagingInput: [Double]]) {
        let lengths = Set(columns.values.map(\.count))
        precondition(lengths.count <= 1, "EpochTable columns must have equal lengths")
        self.columns = columns
        self.count = lengths.first ?? 0
    }

    public var inputs: Set<StagingInput> { Set(columns.keys) }
    public subscript(_ input: StagingInput) -> [Double]? { columns[input] }
}

/// Stage index order used by the model (`awake, light, deep, rem`).
extension SleepStage {
    static let modelOrder: [SleepStage] = [.awake, .light, .deep, .rem]
}
