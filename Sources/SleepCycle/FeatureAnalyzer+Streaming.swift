import SleepCycleDSP

extension FeatureAnalyzer: StreamingFeatureExtractor {}
