#!/usr/bin/env python3
"""Comparison point for bench_features.sh: essentia's streaming network computing the same per-frame features
(RMS, spectral centroid, 40 mel bands, 13 MFCCs; frame 1024, hop 512, Hann) for FILE, discarding the values."""
import sys
import essentia
import essentia.streaming as es

essentia.log.infoActive = False
path = sys.argv[1]
loader = es.MonoLoader(filename=path, sampleRate=16000)
frames = es.FrameCutter(frameSize=1024, hopSize=512, startFromZero=False)
window = es.Windowing(type="hann", normalized=False)
spectrum = es.Spectrum()
mfcc = es.MFCC(inputSize=513, numberBands=40, numberCoefficients=13, sampleRate=16000, highFrequencyBound=8000,
               warpingFormula="slaneyMel", normalize="unit_tri", type="power", logType="dbpow", dctType=2)
centroid = es.Centroid(range=8000)
rms = es.RMS()
pool = essentia.Pool()
loader.audio >> frames.signal
frames.frame >> window.frame >> spectrum.frame
frames.frame >> rms.array
spectrum.spectrum >> mfcc.spectrum
spectrum.spectrum >> centroid.array
mfcc.bands >> None
mfcc.mfcc >> (pool, "mfcc")
centroid.centroid >> (pool, "centroid")
rms.rms >> (pool, "rms")
essentia.run(loader)
print(f"essentia frames={len(pool['rms'])}", file=sys.stderr)
