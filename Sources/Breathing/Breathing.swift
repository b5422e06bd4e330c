// Breathing: breathing rate and breathing trace from room audio.
//
// - `BreathingRateEstimator` (BreathingRateEstimator.swift): the bus consumer the engine registers.
// - `FeatureEnvelope` (FeatureEnvelope.swift): the 10-Hz log band-energy envelope from `.features` (default).
// - `BreathingEnvelope` (BreathingEnvelope.swift): the same kind of envelope from `.audio` samples.
// - `BreathingRateAnalyzer` (BreathingRateAnalyzer.swift): autocorrelation + spectral estimate of one window.
// - `BreathingRateEstimator.run(...)` (BreathingRateEstimator+Offline.swift): whole-signal helper for
//   evaluation and tests, fed like the engine's pipeline.
// Design note: docs/0006-breathing.md.
