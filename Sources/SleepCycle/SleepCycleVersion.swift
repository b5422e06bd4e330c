/// The version of this sleepcycle build (semantic versioning; releases are tagged `X.Y.Z` in git).
public enum SleepCycleVersion {
    public static let current = "0.9.0"
}
