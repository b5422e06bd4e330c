import SleepCycleBus

// EventDetection: snoring, talking, coughing and movement detection on the bus.
//
// Pipeline (see docs/0005-event-detection.md):
//   FeatureBlock rows (40 Slaney mel bands, 1024/512 at 16 kHz)
//   → `MelNoiseFloor` (minimum statistics per mel band)
//   → `ActivitySegmenter` (SNR hysteresis, gap bridging, min/max duration)
//   → `SegmentFeatureExtractor` (noise-subtracted, level-invariant segment features + 16-d snore signature)
//   → `SegmentClassifier` (replaceable; built-in: `SegmentModel.builtIn()`, gradient-boosted trees from Resources/event-model.json)
//   → `EventAssembler` (per-class merging, snore-bout confirmation) → `.eventStarted` / `.eventEnded`.
