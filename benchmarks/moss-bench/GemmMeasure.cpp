//===- GemmMeasure.cpp - One GEMM case on the device, checked and timed ---===//

#include "GemmMeasure.h"

#include <algorithm>
#include <cmath>

namespace moss::bench {

int coldWeightCopies(const GemmCase &c, int l2Bytes) {
  size_t weightBytes = c.n * c.k * 2;
  return std::max<int>(kMinColdCopies,
                       static_cast<int>(2 * (size_t)l2Bytes / weightBytes) + 1);
}

GemmCaseData::GemmCaseData(const GemmCase &c, int copies, std::mt19937_64 &rng)
    : c(c), copies(copies), weightStride((c.n * c.k * 2 + 255) / 256 * 256),
      dx(c.m * c.k * 2), dw(weightStride * copies), dscale(c.n * 2),
      dres(c.m * c.n * 2), dgamma(c.k * 2), dbeta(c.k * 2),
      dout(c.m * c.n * 2) {
  double range = 2.0 / std::sqrt(static_cast<double>(c.k));
  x = randomBf16(c.m * c.k, -1, 1, rng);
  w = randomBf16(c.n * c.k, -range, range, rng);
  scale = randomBf16(c.n, -0.5, 0.5, rng);
  res = randomBf16(c.m * c.n, -2, 2, rng);
  gamma = randomBf16(c.k, 0.5, 1.5, rng);
  beta = randomBf16(c.k, -0.5, 0.5, rng);
}

bool GemmCaseData::upload() {
  if (!dx.ok() || !dw.ok() || !dscale.ok() || !dres.ok() || !dgamma.ok() ||
      !dbeta.ok() || !dout.ok())
    return false;
  cudaMemcpy(dgamma.get(), gamma.data(), gamma.size() * 2,
             cudaMemcpyHostToDevice);
  cudaMemcpy(dbeta.get(), beta.data(), beta.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dx.get(), x.data(), x.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dscale.get(), scale.data(), scale.size() * 2,
             cudaMemcpyHostToDevice);
  cudaMemcpy(dres.get(), res.data(), res.size() * 2, cudaMemcpyHostToDevice);
  for (int i = 0; i < copies; ++i)
    cudaMemcpy(weight(i), w.data(), w.size() * 2, cudaMemcpyHostToDevice);
  const config::GemmModeInfo &mode = *config::gemmModeInfo(c.mode);
  ref = referenceOutput(mode.layerNorm
                            ? host::layerNormReference(
                                  x, gamma, beta, host::kLayerNormEps, c.m, c.k)
                            : x,
                        w, scale, res, c.m, c.n, c.k, mode.epilogue);
  refPlain =
      c.mode == 0 ? ref : referenceOutput(x, w, scale, res, c.m, c.n, c.k, 0);
  return cudaDeviceSynchronize() == cudaSuccess;
}

void *GemmCaseData::weight(int copy) const {
  return static_cast<char *>(dw.get()) + weightStride * copy;
}

host::GemmOperands GemmCaseData::operands(int copy) const {
  host::GemmOperands ops;
  ops.x = dx.get();
  ops.w = weight(copy);
  ops.scale = dscale.get();
  ops.residual = dres.get();
  ops.gamma = dgamma.get();
  ops.beta = dbeta.get();
  ops.out = dout.get();
  return ops;
}

std::vector<uint16_t> GemmCaseData::output() const {
  std::vector<uint16_t> out(c.m * c.n);
  cudaMemcpy(out.data(), dout.get(), out.size() * 2, cudaMemcpyDeviceToHost);
  return out;
}

void GemmCaseData::poisonOutput() {
  std::vector<uint16_t> nan(c.m * c.n, 0x7FC0);
  cudaMemcpy(dout.get(), nan.data(), nan.size() * 2, cudaMemcpyHostToDevice);
}

Measurement measureGemm(GemmCaseData &data, const TimingProtocol &protocol,
                        bool cold, bool plainReference, cudaStream_t stream,
                        const GemmCallFn &call) {
  Measurement m;
  data.poisonOutput();
  if (!call(0, stream, m.error))
    return m;
  cudaStreamSynchronize(stream);
  m.relL2 =
      relativeL2(data.output(), plainReference ? data.refPlain : data.ref);
  int perGraph = protocol.callsPerGraph;
  auto enqueue = [&](int graph, int index, cudaStream_t s, int copies) {
    return call((graph * perGraph + index) % copies, s, m.error);
  };
  std::string err;
  m.hotUs = timePerCallUs(
      stream, protocol, 1,
      [&](int g, int i, cudaStream_t s) { return enqueue(g, i, s, 1); }, err);
  if (cold) {
    int graphs = (data.copies + perGraph - 1) / perGraph;
    m.coldUs = timePerCallUs(
        stream, protocol, graphs,
        [&](int g, int i, cudaStream_t s) {
          return enqueue(g, i, s, data.copies);
        },
        err);
  }
  if (m.error.empty())
    m.error = err;
  return m;
}

bool graphReplayEqualsEager(GemmCaseData &data, cudaStream_t stream,
                            const GemmCallFn &call, bool &equal,
                            std::string &err) {
  data.poisonOutput();
  if (!call(0, stream, err))
    return false;
  if (cudaStreamSynchronize(stream) != cudaSuccess) {
    err = "eager call failed on the device";
    return false;
  }
  std::vector<uint16_t> eager = data.output();
  data.poisonOutput();
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) !=
      cudaSuccess) {
    err = "cudaStreamBeginCapture failed";
    return false;
  }
  bool called = call(0, stream, err);
  cudaGraph_t graph = nullptr;
  cudaError_t status = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (called && status == cudaSuccess)
    status = cudaGraphInstantiate(&exec, graph, 0);
  // Two replays: the second one starts from what the first left behind
  // (nothing a launch leaves may change the next one's result).
  for (int replay = 0; replay < 2 && exec && status == cudaSuccess; ++replay)
    status = cudaGraphLaunch(exec, stream);
  if (status == cudaSuccess)
    status = cudaStreamSynchronize(stream);
  if (exec)
    cudaGraphExecDestroy(exec);
  if (graph)
    cudaGraphDestroy(graph);
  if (!called)
    return false;
  if (status != cudaSuccess) {
    err = std::string("graph replay: ") + cudaGetErrorName(status);
    return false;
  }
  equal = data.output() == eager;
  return true;
}

} // namespace moss::bench
