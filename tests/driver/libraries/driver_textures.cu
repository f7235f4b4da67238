// Arrays, textures and surfaces through NVIDIA's runtime (linked statically, as nvcc does by
// default), which runs them on the driver: 2D and 3D copies into and out of arrays, texture
// objects over a 2D array, a 3D array, a mipmapped array's level, linear and pitched device
// memory, a surface written by a kernel, and a texture's resource read back. Each kernel writes
// what it read into linear memory, so the result is the texels, compared with the CPU's; on the
// simulated device, which runs no kernel, the copies through arrays alone round-trip ("round
// trips: ok").
#include <cstdint>
#include <vector>

#include "library_check.h"

constexpr int kW = 64, kH = 32;         // the 2D array and the surface
constexpr int kX = 16, kY = 8, kZ = 4;  // the 3D array
constexpr int kMip = 32;                // the mipmapped array's first level is kMip x kMip

__global__ void read_2d(cudaTextureObject_t tex, float* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

__global__ void read_3d(cudaTextureObject_t tex, float* out, int w, int h, int d) {
  const int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
  if (x < w && y < h && z < d)
    out[(z * h + y) * w + x] = tex3D<float>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}

__global__ void read_level(cudaTextureObject_t tex, float* out, int w, float level) {
  const int x = threadIdx.x, y = blockIdx.x;
  // Normalised coordinates: the level's texel centres.
  out[y * w + x] = tex2DLod<float>(tex, (x + 0.5f) / w, (y + 0.5f) / w, level);
}

__global__ void read_linear(cudaTextureObject_t tex, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}

__global__ void write_surface(cudaSurfaceObject_t surf, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite(static_cast<float>(3 * x - y), surf, x * sizeof(float), y);
}

cudaTextureObject_t texture_of(const cudaResourceDesc& resource, bool normalized) {
  cudaTextureDesc desc{};
  desc.addressMode[0] = desc.addressMode[1] = desc.addressMode[2] = cudaAddressModeClamp;
  desc.filterMode = cudaFilterModePoint;
  desc.mipmapFilterMode = cudaFilterModePoint;
  desc.readMode = cudaReadModeElementType;
  desc.normalizedCoords = normalized;
  desc.maxMipmapLevelClamp = 8;
  cudaTextureObject_t tex = 0;
  CHECK_CUDA(cudaCreateTextureObject(&tex, &resource, &desc, nullptr));
  return tex;
}

int main() {
  const cudaChannelFormatDesc channel = cudaCreateChannelDesc<float>();
  std::vector<float> got, want;
  bool round_trips = true;
  // `data` (width x height floats) up into `array` with a 2D copy and back into `back` with
  // another: whether it came back as it went.
  const auto round_trip_2d = [](cudaArray_t array, const std::vector<float>& data,
                                std::vector<float>& back, int width, int height) {
    const size_t row = static_cast<size_t>(width) * sizeof(float);
    CHECK_CUDA(
        cudaMemcpy2DToArray(array, 0, 0, data.data(), row, row, height, cudaMemcpyHostToDevice));
    CHECK_CUDA(
        cudaMemcpy2DFromArray(back.data(), row, array, 0, 0, row, height, cudaMemcpyDeviceToHost));
    return back == data;
  };

  // A 2D array: up with a 2D copy, read by a kernel through a texture, back with a 2D copy.
  std::vector<float> plane(kW * kH), back(kW * kH);
  for (int i = 0; i < kW * kH; ++i) plane[i] = static_cast<float>(i % 97) * 0.25f;
  cudaArray_t array2d = nullptr;
  CHECK_CUDA(cudaMallocArray(&array2d, &channel, kW, kH));
  round_trips = round_trips && round_trip_2d(array2d, plane, back, kW, kH);
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array2d;
  const cudaTextureObject_t tex2d = texture_of(resource, false);
  cudaResourceDesc described{};
  CHECK_CUDA(cudaGetTextureObjectResourceDesc(&described, tex2d));
  round_trips = round_trips && described.resType == cudaResourceTypeArray &&
                described.res.array.array == array2d;
  float* out = nullptr;
  CHECK_CUDA(cudaMalloc(&out, kW * kH * sizeof(float)));
  read_2d<<<dim3(kW / 16, kH / 16), dim3(16, 16)>>>(tex2d, out, kW, kH);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(back.data(), out, kW * kH * sizeof(float), cudaMemcpyDeviceToHost));
  got.insert(got.end(), back.begin(), back.end());
  want.insert(want.end(), plane.begin(), plane.end());

  // An array to an array and to device memory, by 2D copies with offsets.
  cudaArray_t copy2d = nullptr;
  CHECK_CUDA(cudaMallocArray(&copy2d, &channel, kW, kH));
  CHECK_CUDA(cudaMemcpy2DArrayToArray(copy2d, 0, 0, array2d, 0, 0, kW * sizeof(float), kH,
                                      cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemcpy2DFromArray(out, kW * sizeof(float), copy2d, 0, 0, kW * sizeof(float), kH,
                                   cudaMemcpyDeviceToDevice));
  std::vector<float> rows(kW * 2);
  CHECK_CUDA(cudaMemcpy2DFromArray(rows.data(), kW * sizeof(float), copy2d, 0, 5,
                                   kW * sizeof(float), 2, cudaMemcpyDeviceToHost));
  round_trips = round_trips && std::equal(rows.begin(), rows.end(), plane.begin() + 5 * kW);
  CHECK_CUDA(cudaMemcpy(back.data(), out, kW * kH * sizeof(float), cudaMemcpyDeviceToHost));
  round_trips = round_trips && back == plane;

  // A surface: written by a kernel, read back with a 2D copy.
  cudaArray_t surface_array = nullptr;
  CHECK_CUDA(cudaMallocArray(&surface_array, &channel, kW, kH, cudaArraySurfaceLoadStore));
  cudaResourceDesc surface_resource{};
  surface_resource.resType = cudaResourceTypeArray;
  surface_resource.res.array.array = surface_array;
  cudaSurfaceObject_t surface = 0;
  CHECK_CUDA(cudaCreateSurfaceObject(&surface, &surface_resource));
  write_surface<<<dim3(kW / 16, kH / 16), dim3(16, 16)>>>(surface, kW, kH);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy2DFromArray(back.data(), kW * sizeof(float), surface_array, 0, 0,
                                   kW * sizeof(float), kH, cudaMemcpyDeviceToHost));
  got.insert(got.end(), back.begin(), back.end());
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) want.push_back(static_cast<float>(3 * x - y));

  // A 3D array: up and back with 3D copies, read through a texture.
  std::vector<float> volume(kX * kY * kZ), volume_back(kX * kY * kZ);
  for (int i = 0; i < kX * kY * kZ; ++i) volume[i] = static_cast<float>(i) - 100.f;
  cudaArray_t array3d = nullptr;
  CHECK_CUDA(cudaMalloc3DArray(&array3d, &channel, make_cudaExtent(kX, kY, kZ)));
  cudaMemcpy3DParms up{};
  up.srcPtr = make_cudaPitchedPtr(volume.data(), kX * sizeof(float), kX, kY);
  up.dstArray = array3d;
  up.extent = make_cudaExtent(kX, kY, kZ);
  up.kind = cudaMemcpyHostToDevice;
  CHECK_CUDA(cudaMemcpy3D(&up));
  cudaMemcpy3DParms down{};
  down.srcArray = array3d;
  down.dstPtr = make_cudaPitchedPtr(volume_back.data(), kX * sizeof(float), kX, kY);
  down.extent = make_cudaExtent(kX, kY, kZ);
  down.kind = cudaMemcpyDeviceToHost;
  CHECK_CUDA(cudaMemcpy3DAsync(&down, nullptr));
  CHECK_CUDA(cudaStreamSynchronize(nullptr));
  round_trips = round_trips && volume_back == volume;
  resource.res.array.array = array3d;
  const cudaTextureObject_t tex3d = texture_of(resource, false);
  read_3d<<<kZ, dim3(kX, kY)>>>(tex3d, out, kX, kY, kZ);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(
      cudaMemcpy(volume_back.data(), out, volume.size() * sizeof(float), cudaMemcpyDeviceToHost));
  got.insert(got.end(), volume_back.begin(), volume_back.end());
  want.insert(want.end(), volume.begin(), volume.end());

  // A mipmapped array: level 1 filled with a 2D copy, read at level 1 through a texture.
  cudaMipmappedArray_t mipmapped = nullptr;
  CHECK_CUDA(cudaMallocMipmappedArray(&mipmapped, &channel, make_cudaExtent(kMip, kMip, 0), 3));
  cudaArray_t level1 = nullptr;
  CHECK_CUDA(cudaGetMipmappedArrayLevel(&level1, mipmapped, 1));
  constexpr int kLevel = kMip / 2;
  std::vector<float> level(kLevel * kLevel), level_back(kLevel * kLevel);
  for (int i = 0; i < kLevel * kLevel; ++i) level[i] = static_cast<float>(i) * 0.5f;
  CHECK_CUDA(cudaMemcpy2DToArray(level1, 0, 0, level.data(), kLevel * sizeof(float),
                                 kLevel * sizeof(float), kLevel, cudaMemcpyHostToDevice));
  cudaResourceDesc mip_resource{};
  mip_resource.resType = cudaResourceTypeMipmappedArray;
  mip_resource.res.mipmap.mipmap = mipmapped;
  const cudaTextureObject_t tex_mip = texture_of(mip_resource, true);
  read_level<<<kLevel, kLevel>>>(tex_mip, out, kLevel, 1.0f);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(
      cudaMemcpy(level_back.data(), out, level.size() * sizeof(float), cudaMemcpyDeviceToHost));
  got.insert(got.end(), level_back.begin(), level_back.end());
  want.insert(want.end(), level.begin(), level.end());

  // Linear and pitched device memory through textures.
  float* linear = nullptr;
  CHECK_CUDA(cudaMalloc(&linear, kW * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(linear, plane.data(), kW * sizeof(float), cudaMemcpyHostToDevice));
  cudaResourceDesc linear_resource{};
  linear_resource.resType = cudaResourceTypeLinear;
  linear_resource.res.linear.devPtr = linear;
  linear_resource.res.linear.desc = channel;
  linear_resource.res.linear.sizeInBytes = kW * sizeof(float);
  const cudaTextureObject_t tex_linear = texture_of(linear_resource, false);
  read_linear<<<1, kW>>>(tex_linear, out, kW);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(back.data(), out, kW * sizeof(float), cudaMemcpyDeviceToHost));
  got.insert(got.end(), back.begin(), back.begin() + kW);
  want.insert(want.end(), plane.begin(), plane.begin() + kW);
  float* pitched = nullptr;
  size_t pitch = 0;
  CHECK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&pitched), &pitch, kW * sizeof(float), kH));
  CHECK_CUDA(cudaMemcpy2D(pitched, pitch, plane.data(), kW * sizeof(float), kW * sizeof(float), kH,
                          cudaMemcpyHostToDevice));
  cudaResourceDesc pitched_resource{};
  pitched_resource.resType = cudaResourceTypePitch2D;
  pitched_resource.res.pitch2D.devPtr = pitched;
  pitched_resource.res.pitch2D.desc = channel;
  pitched_resource.res.pitch2D.width = kW;
  pitched_resource.res.pitch2D.height = kH;
  pitched_resource.res.pitch2D.pitchInBytes = pitch;
  const cudaTextureObject_t tex_pitched = texture_of(pitched_resource, false);
  read_2d<<<dim3(kW / 16, kH / 16), dim3(16, 16)>>>(tex_pitched, out, kW, kH);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(back.data(), out, kW * kH * sizeof(float), cudaMemcpyDeviceToHost));
  got.insert(got.end(), back.begin(), back.end());
  want.insert(want.end(), plane.begin(), plane.end());

  // Copies larger than a chunk of the wire (16 MiB): a 2D array's rows and a 3D array's slices
  // travel in pieces, and come back as they went.
  constexpr int kWide = 8192, kTall = 640, kSide = 512, kDeep = 20;
  std::vector<float> big(size_t{kWide} * kTall), big_back(big.size());
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 10007);
  cudaArray_t wide = nullptr;
  CHECK_CUDA(cudaMallocArray(&wide, &channel, kWide, kTall));
  round_trips = round_trips && round_trip_2d(wide, big, big_back, kWide, kTall);
  cudaArray_t deep = nullptr;
  CHECK_CUDA(cudaMalloc3DArray(&deep, &channel, make_cudaExtent(kSide, kSide, kDeep)));
  big.resize(size_t{kSide} * kSide * kDeep);
  big_back.assign(big.size(), 0.f);
  up = {};
  up.srcPtr = make_cudaPitchedPtr(big.data(), kSide * sizeof(float), kSide, kSide);
  up.dstArray = deep;
  up.extent = make_cudaExtent(kSide, kSide, kDeep);
  up.kind = cudaMemcpyHostToDevice;
  CHECK_CUDA(cudaMemcpy3DAsync(&up, nullptr));
  down = {};
  down.srcArray = deep;
  down.dstPtr = make_cudaPitchedPtr(big_back.data(), kSide * sizeof(float), kSide, kSide);
  down.extent = make_cudaExtent(kSide, kSide, kDeep);
  down.kind = cudaMemcpyDeviceToHost;
  CHECK_CUDA(cudaMemcpy3D(&down));
  round_trips = round_trips && big_back == big;

  for (const cudaTextureObject_t tex : {tex2d, tex3d, tex_mip, tex_linear, tex_pitched}) {
    CHECK_CUDA(cudaDestroyTextureObject(tex));
  }
  CHECK_CUDA(cudaDestroySurfaceObject(surface));
  CHECK_CUDA(cudaFreeMipmappedArray(mipmapped));
  for (const cudaArray_t array : {array2d, copy2d, surface_array, array3d, wide, deep}) {
    CHECK_CUDA(cudaFreeArray(array));
  }
  CHECK_CUDA(cudaFree(pitched));
  CHECK_CUDA(cudaFree(linear));
  CHECK_CUDA(cudaFree(out));
  std::printf("round trips: %s\n", round_trips ? "ok" : "FAILED");
  return report(got.data(), want.data(), got.size(), 0.0);
}
