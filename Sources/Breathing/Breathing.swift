// Breathing: breathing rate and breathing trace from room audio.
//
// - `BreathingRateEstimator` (BreathingRateEstimator.swift): the bus consumer the engine registers.
// - `BreathingEnvelope` (BreathingEnvelope.swift): band-limited log-energy envelope at ~10 Hz.
// - `BreathingRateAnalyzer` (BreathingRateAnalyzer.swift): autocorrelation + spectral estimate of one window.
// - `BreathingRateEstimator.estimates(...)` (BreathingRateEstimator+Offline.swift): whole-signal helper for
//   evaluation and tests.
// Design note: docs/0006-breathing.md.
