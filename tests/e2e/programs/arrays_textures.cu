// CUDA arrays, texture and surface objects: arrays (2D, 3D, mipmapped and their levels), copies
// to and from them in every form (2D, the deprecated 1D ones, array to array, async, chunked
// above 16 MiB), textures over arrays, mipmapped arrays and linear memory read by a kernel, a
// surface written by one, and the objects' descriptors. On a GPU each result is checked against
// the host's data.
#include <cstring>
#include <vector>

#include "check.h"

// cudaMemcpyToArray and friends are deprecated, and still CUDA's: programs call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

__global__ void read_texture_2d(cudaTextureObject_t tex, float* out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) out[y * width + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

__global__ void read_texture_linear(cudaTextureObject_t tex, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(tex, i);
}

__global__ void read_texture_level(cudaTextureObject_t tex, float* out, int width, float level) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < width) out[x] = tex2DLod<float>(tex, (x + 0.5f) / width, 0.5f, level);
}

__global__ void write_surface(cudaSurfaceObject_t surf, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) surf2Dwrite(float(x * 1000 + y), surf, x * int(sizeof(float)), y);
}

int main() {
  const int width = 64, height = 32;
  const size_t row = width * sizeof(float);
  // The host side pitched wider than a row, as an image in a larger buffer is.
  const size_t host_pitch = row + 48;
  std::vector<char> host(host_pitch * height), back(host_pitch * height, 0);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float value = float(y * width + x) * 0.5f;
      std::memcpy(&host[y * host_pitch + x * sizeof(float)], &value, sizeof value);
    }
  }
  auto same_rows = [&](const std::vector<char>& a, const std::vector<char>& b, size_t pitch) {
    for (int y = 0; y < height; ++y) {
      if (std::memcmp(&a[y * pitch], &b[y * pitch], row) != 0) return false;
    }
    return true;
  };

  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  const bool made = OK(cudaMallocArray(&array, &desc, width, height, cudaArraySurfaceLoadStore));
  EXPECT(made == (array != nullptr));

  // What the array is.
  cudaChannelFormatDesc got{};
  cudaExtent extent{};
  unsigned flags = 0;
  if (OK(cudaArrayGetInfo(&got, &extent, &flags, array))) {
    EXPECT(got.x == 32 && got.f == cudaChannelFormatKindFloat);
    EXPECT(extent.width == width && extent.height == height && extent.depth == 0);
    EXPECT(flags == cudaArraySurfaceLoadStore);
  }
  cudaChannelFormatDesc channel{};
  if (OK(cudaGetChannelDesc(&channel, array))) EXPECT(channel.x == 32 && channel.y == 0);

  // 2D copies in and out, the host side pitched.
  if (OK(cudaMemcpy2DToArray(array, 0, 0, host.data(), host_pitch, row, height,
                             cudaMemcpyHostToDevice)) &&
      OK(cudaMemcpy2DFromArray(back.data(), host_pitch, array, 0, 0, row, height,
                               cudaMemcpyDeviceToHost))) {
    EXPECT(same_rows(host, back, host_pitch));
  }
  // Part of the array, at an offset, and cudaMemcpyDefault.
  std::vector<float> part(8 * 4, -1.0f);
  if (OK(cudaMemcpy2DFromArray(part.data(), 8 * sizeof(float), array, 4 * sizeof(float), 3,
                               8 * sizeof(float), 4, cudaMemcpyDefault))) {
    EXPECT(part[0] == float(3 * width + 4) * 0.5f && part[31] == float(6 * width + 11) * 0.5f);
  }
  // An offset beyond the array: the runtime's error, and the buffer untouched.
  std::vector<float> untouched(4, -2.0f);
  SHOW(cudaMemcpy2DFromArray(untouched.data(), 4 * sizeof(float), array, 0, height + 5,
                             4 * sizeof(float), 1, cudaMemcpyDeviceToHost));
  EXPECT(untouched[0] == -2.0f);

  // The deprecated 1D forms, across rows.
  std::vector<float> line(100);
  for (int i = 0; i < 100; ++i) line[i] = float(i) + 0.25f;
  std::vector<float> line_back(100, 0.0f);
  if (OK(cudaMemcpyToArray(array, 10 * sizeof(float), 2, line.data(), sizeof(float) * 100,
                           cudaMemcpyHostToDevice)) &&
      OK(cudaMemcpyFromArray(line_back.data(), array, 10 * sizeof(float), 2, sizeof(float) * 100,
                             cudaMemcpyDeviceToHost))) {
    EXPECT(line == line_back);
  }

  // Array to array, and to and from device memory, asynchronously on a stream.
  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreate(&stream));
  cudaArray_t copy = nullptr;
  SHOW(cudaMallocArray(&copy, &desc, width, height));
  SHOW(cudaMemcpy2DToArray(array, 0, 0, host.data(), host_pitch, row, height,
                           cudaMemcpyHostToDevice));
  SHOW(cudaMemcpy2DArrayToArray(copy, 0, 0, array, 0, 0, row, height, cudaMemcpyDeviceToDevice));
  float* device = nullptr;
  size_t device_pitch = 0;
  SHOW(cudaMallocPitch((void**)&device, &device_pitch, row, height));
  SHOW(cudaMemcpy2DFromArrayAsync(device, device_pitch, copy, 0, 0, row, height,
                                  cudaMemcpyDeviceToDevice, stream));
  std::fill(back.begin(), back.end(), 0);
  SHOW(cudaMemcpy2DAsync(back.data(), host_pitch, device, device_pitch, row, height,
                         cudaMemcpyDeviceToHost, stream));
  if (OK(cudaStreamSynchronize(stream))) EXPECT(same_rows(host, back, host_pitch));
  std::fill(back.begin(), back.end(), 0);
  SHOW(cudaMemcpy2DToArrayAsync(copy, 0, 0, device, device_pitch, row, height,
                                cudaMemcpyDeviceToDevice, stream));
  SHOW(cudaMemcpy2DFromArrayAsync(back.data(), host_pitch, copy, 0, 0, row, height,
                                  cudaMemcpyDeviceToHost, stream));
  if (OK(cudaStreamSynchronize(stream))) EXPECT(same_rows(host, back, host_pitch));
  SHOW(cudaMemcpyArrayToArray(copy, 0, 1, array, 0, 0, row, cudaMemcpyDeviceToDevice));

  // A texture over the array, read by a kernel.
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaTextureDesc texture{};
  texture.addressMode[0] = texture.addressMode[1] = cudaAddressModeClamp;
  texture.filterMode = cudaFilterModePoint;
  texture.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex = 0;
  if (OK(cudaCreateTextureObject(&tex, &resource, &texture, nullptr))) {
    float* read = nullptr;
    SHOW(cudaMalloc((void**)&read, row * height));
    read_texture_2d<<<dim3(width / 16, height / 16), dim3(16, 16)>>>(tex, read, width, height);
    SHOW(cudaGetLastError());
    std::vector<float> values(width * height, 0.0f);
    if (OK(cudaMemcpy(values.data(), read, row * height, cudaMemcpyDeviceToHost))) {
      bool all = true;
      for (int i = 0; i < width * height; ++i) all = all && values[i] == float(i) * 0.5f;
      EXPECT(all);
    }
    cudaResourceDesc described{};
    if (OK(cudaGetTextureObjectResourceDesc(&described, tex))) {
      EXPECT(described.resType == cudaResourceTypeArray && described.res.array.array == array);
    }
    cudaTextureDesc texture_back{};
    if (OK(cudaGetTextureObjectTextureDesc(&texture_back, tex))) {
      EXPECT(texture_back.filterMode == cudaFilterModePoint);
    }
    SHOW(cudaFree(read));
    SHOW(cudaDestroyTextureObject(tex));
  }

  // A surface over the second array, written by a kernel.
  resource.res.array.array = copy;
  cudaSurfaceObject_t surf = 0;
  cudaArray_t surface_array = nullptr;
  SHOW(cudaMallocArray(&surface_array, &desc, width, height, cudaArraySurfaceLoadStore));
  resource.res.array.array = surface_array;
  if (OK(cudaCreateSurfaceObject(&surf, &resource))) {
    write_surface<<<dim3(width / 16, height / 16), dim3(16, 16)>>>(surf, width, height);
    SHOW(cudaGetLastError());
    std::vector<float> values(width * height, 0.0f);
    if (OK(cudaMemcpy2DFromArray(values.data(), row, surface_array, 0, 0, row, height,
                                 cudaMemcpyDeviceToHost))) {
      EXPECT(values[5 * width + 7] == 7000.0f + 5.0f && values[width - 1] == 63000.0f);
    }
    cudaResourceDesc described{};
    if (OK(cudaGetSurfaceObjectResourceDesc(&described, surf))) {
      EXPECT(described.res.array.array == surface_array);
    }
    SHOW(cudaDestroySurfaceObject(surf));
  }

  // A texture over linear device memory.
  const int n = 256;
  std::vector<int> ints(n);
  for (int i = 0; i < n; ++i) ints[i] = i * i - 7;
  int* linear = nullptr;
  int* fetched = nullptr;
  SHOW(cudaMalloc((void**)&linear, n * sizeof(int)));
  SHOW(cudaMalloc((void**)&fetched, n * sizeof(int)));
  SHOW(cudaMemcpy(linear, ints.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaResourceDesc linear_resource{};
  linear_resource.resType = cudaResourceTypeLinear;
  linear_resource.res.linear.devPtr = linear;
  linear_resource.res.linear.desc = cudaCreateChannelDesc<int>();
  linear_resource.res.linear.sizeInBytes = n * sizeof(int);
  cudaTextureDesc linear_texture{};
  linear_texture.readMode = cudaReadModeElementType;
  cudaTextureObject_t linear_tex = 0;
  if (OK(cudaCreateTextureObject(&linear_tex, &linear_resource, &linear_texture, nullptr))) {
    read_texture_linear<<<1, n>>>(linear_tex, fetched, n);
    std::vector<int> got_ints(n, 0);
    if (OK(cudaMemcpy(got_ints.data(), fetched, n * sizeof(int), cudaMemcpyDeviceToHost))) {
      EXPECT(got_ints == ints);
    }
    SHOW(cudaDestroyTextureObject(linear_tex));
  }

  // A mipmapped array: a level filled and read through a texture with its level of detail.
  cudaMipmappedArray_t mipmapped = nullptr;
  SHOW(cudaMallocMipmappedArray(&mipmapped, &desc, make_cudaExtent(width, height, 0), 3));
  cudaArray_t level = nullptr;
  if (OK(cudaGetMipmappedArrayLevel(&level, mipmapped, 1))) {
    cudaExtent level_extent{};
    if (OK(cudaArrayGetInfo(&got, &level_extent, &flags, level))) {
      EXPECT(level_extent.width == width / 2 && level_extent.height == height / 2);
    }
    std::vector<float> half(width / 2 * height / 2, 3.5f);
    SHOW(cudaMemcpy2DToArray(level, 0, 0, half.data(), row / 2, row / 2, height / 2,
                             cudaMemcpyHostToDevice));
    cudaResourceDesc mip_resource{};
    mip_resource.resType = cudaResourceTypeMipmappedArray;
    mip_resource.res.mipmap.mipmap = mipmapped;
    cudaTextureDesc mip_texture{};
    mip_texture.normalizedCoords = 1;
    mip_texture.filterMode = cudaFilterModePoint;
    mip_texture.mipmapFilterMode = cudaFilterModePoint;
    mip_texture.maxMipmapLevelClamp = 2;
    cudaTextureObject_t mip_tex = 0;
    if (OK(cudaCreateTextureObject(&mip_tex, &mip_resource, &mip_texture, nullptr))) {
      float* lod = nullptr;
      SHOW(cudaMalloc((void**)&lod, row / 2));
      read_texture_level<<<1, width / 2>>>(mip_tex, lod, width / 2, 1.0f);
      std::vector<float> lod_values(width / 2, 0.0f);
      if (OK(cudaMemcpy(lod_values.data(), lod, row / 2, cudaMemcpyDeviceToHost))) {
        EXPECT(lod_values[0] == 3.5f && lod_values[width / 2 - 1] == 3.5f);
      }
      SHOW(cudaFree(lod));
      SHOW(cudaDestroyTextureObject(mip_tex));
    }
  }
  SHOW(cudaFreeMipmappedArray(mipmapped));

  // A 3D array's description, and a copy larger than one chunk: 32 MiB of float4 rows, in 2D and
  // 1D from the middle of a row.
  cudaArray_t volume = nullptr;
  if (OK(cudaMalloc3DArray(&volume, &desc, make_cudaExtent(16, 8, 4)))) {
    if (OK(cudaArrayGetInfo(&got, &extent, &flags, volume))) {
      EXPECT(extent.width == 16 && extent.height == 8 && extent.depth == 4);
    }
    SHOW(cudaFreeArray(volume));
  }
  // 3D copies: host (pitched, at a position) to a 3D array and back, through pitched device memory
  // asynchronously, between devices' memory (the peer form, on one device), and one of 24 MiB.
  const int vw = 16, vh = 8, vd = 4;
  const size_t host_row = 40 * sizeof(float);  // wider than the volume's rows
  std::vector<float> box(size_t(40) * 10 * 6, 0.0f), box_back(size_t(40) * 10 * 6, -1.0f);
  for (size_t i = 0; i < box.size(); ++i) box[i] = float(i) * 0.25f;
  cudaArray_t volume3 = nullptr;
  if (OK(cudaMalloc3DArray(&volume3, &desc, make_cudaExtent(vw, vh, vd)))) {
    cudaMemcpy3DParms in{};
    in.srcPtr = make_cudaPitchedPtr(box.data(), host_row, 40, 10);
    // With an array taking part, x is in the array's elements on the other side too (the
    // runtime passes the driver 3 x 4 bytes).
    in.srcPos = make_cudaPos(3, 1, 2);
    in.dstArray = volume3;
    in.extent = make_cudaExtent(vw, vh, vd);
    in.kind = cudaMemcpyHostToDevice;
    cudaMemcpy3DParms out{};
    out.srcArray = volume3;
    out.dstPtr = make_cudaPitchedPtr(box_back.data(), host_row, 40, 10);
    out.dstPos = in.srcPos;
    out.extent = in.extent;
    out.kind = cudaMemcpyDeviceToHost;
    if (OK(cudaMemcpy3D(&in)) && OK(cudaMemcpy3D(&out))) {
      bool all = true;
      for (int z = 0; z < vd; ++z)
        for (int y = 0; y < vh; ++y)
          for (int x = 0; x < vw; ++x) {
            const size_t i = size_t(z + 2) * 40 * 10 + size_t(y + 1) * 40 + size_t(x + 3);
            all = all && box_back[i] == box[i];
          }
      EXPECT(all);
      EXPECT(box_back[0] == -1.0f);  // outside the box: untouched
    }
    cudaPitchedPtr pitched{};
    if (OK(cudaMalloc3D(&pitched, make_cudaExtent(vw * sizeof(float), vh, vd)))) {
      cudaMemcpy3DParms to_linear{};
      to_linear.srcArray = volume3;
      to_linear.dstPtr = pitched;
      to_linear.extent = in.extent;
      to_linear.kind = cudaMemcpyDeviceToDevice;
      SHOW(cudaMemcpy3DAsync(&to_linear, stream));
      cudaPitchedPtr twin{};
      SHOW(cudaMalloc3D(&twin, make_cudaExtent(vw * sizeof(float), vh, vd)));
      cudaMemcpy3DPeerParms peer{};
      peer.srcPtr = pitched;
      peer.srcDevice = 0;
      peer.dstPtr = twin;
      peer.dstDevice = 0;
      peer.extent = make_cudaExtent(vw * sizeof(float), vh, vd);
      SHOW(cudaMemcpy3DPeerAsync(&peer, stream));
      std::vector<float> flat(size_t(vw) * vh * vd, -1.0f);
      cudaMemcpy3DParms back3{};
      back3.srcPtr = twin;
      back3.dstPtr = make_cudaPitchedPtr(flat.data(), vw * sizeof(float), vw, vh);
      back3.extent = make_cudaExtent(vw * sizeof(float), vh, vd);
      back3.kind = cudaMemcpyDefault;
      SHOW(cudaMemcpy3DAsync(&back3, stream));
      if (OK(cudaStreamSynchronize(stream))) {
        EXPECT(flat[0] == box[size_t(2) * 400 + 40 + 3] &&
               flat[flat.size() - 1] == box[size_t(5) * 400 + 8 * 40 + 18]);
      }
      SHOW(cudaFree(twin.ptr));
      SHOW(cudaFree(pitched.ptr));
    }
    SHOW(cudaFreeArray(volume3));
  }
  cudaChannelFormatDesc desc4 = cudaCreateChannelDesc<float4>();
  {
    const int bw = 128, bh = 128, bd = 96;  // 24 MiB of float4
    cudaArray_t big3 = nullptr;
    std::vector<unsigned char> cube(size_t(bw) * bh * bd * sizeof(float4)), cube_back(cube.size());
    for (size_t i = 0; i < cube.size(); ++i) cube[i] = (unsigned char)(i * 7 + (i >> 14));
    if (OK(cudaMalloc3DArray(&big3, &desc4, make_cudaExtent(bw, bh, bd)))) {
      cudaMemcpy3DParms in{};
      in.srcPtr = make_cudaPitchedPtr(cube.data(), bw * sizeof(float4), bw, bh);
      in.dstArray = big3;
      in.extent = make_cudaExtent(bw, bh, bd);
      in.kind = cudaMemcpyHostToDevice;
      cudaMemcpy3DParms out{};
      out.srcArray = big3;
      out.dstPtr = make_cudaPitchedPtr(cube_back.data(), bw * sizeof(float4), bw, bh);
      out.extent = in.extent;
      out.kind = cudaMemcpyDeviceToHost;
      if (OK(cudaMemcpy3D(&in)) && OK(cudaMemcpy3D(&out))) EXPECT(cube == cube_back);
      SHOW(cudaFreeArray(big3));
    }
  }
  const int big_width = 2048, big_height = 1024;
  const size_t big_row = big_width * sizeof(float4);
  cudaArray_t big = nullptr;
  std::vector<unsigned char> big_host(big_row * big_height), big_back(big_row * big_height, 0);
  for (size_t i = 0; i < big_host.size(); ++i) big_host[i] = (unsigned char)(i * 13 + (i >> 12));
  if (OK(cudaMallocArray(&big, &desc4, big_width, big_height))) {
    if (OK(cudaMemcpy2DToArray(big, 0, 0, big_host.data(), big_row, big_row, big_height,
                               cudaMemcpyHostToDevice)) &&
        OK(cudaMemcpy2DFromArray(big_back.data(), big_row, big, 0, 0, big_row, big_height,
                                 cudaMemcpyDeviceToHost))) {
      EXPECT(big_host == big_back);
    }
    const size_t offset = 100 * sizeof(float4);
    const size_t count = big_host.size() - big_row - offset;
    std::fill(big_back.begin(), big_back.end(), 0);
    if (OK(cudaMemcpyToArray(big, offset, 1, big_host.data(), count, cudaMemcpyHostToDevice)) &&
        OK(cudaMemcpyFromArray(big_back.data(), big, offset, 1, count, cudaMemcpyDeviceToHost))) {
      EXPECT(std::memcmp(big_host.data(), big_back.data(), count) == 0);
    }
    SHOW(cudaFreeArray(big));
  }

  // Graph copy nodes with an array: from the host rows into `copy` and back into `back`, and
  // the same captured from the stream - each launch copying the host memory as it is then.
  cudaGraph_t with_array = nullptr;
  cudaGraphNode_t into = nullptr, out_of = nullptr;
  cudaMemcpy3DParms node_in = {};
  node_in.srcPtr = make_cudaPitchedPtr(host.data(), host_pitch, width, height);
  node_in.dstArray = copy;
  node_in.extent = make_cudaExtent(width, height, 1);
  node_in.kind = cudaMemcpyHostToDevice;
  cudaMemcpy3DParms node_out = {};
  node_out.srcArray = copy;
  node_out.dstPtr = make_cudaPitchedPtr(back.data(), host_pitch, width, height);
  node_out.extent = node_in.extent;
  node_out.kind = cudaMemcpyDeviceToHost;
  if (OK(cudaGraphCreate(&with_array, 0)) &&
      OK(cudaGraphAddMemcpyNode(&into, with_array, nullptr, 0, &node_in)) &&
      OK(cudaGraphAddMemcpyNode(&out_of, with_array, &into, 1, &node_out))) {
    cudaMemcpy3DParms read_back = {};
    if (OK(cudaGraphMemcpyNodeGetParams(out_of, &read_back))) {
      EXPECT(read_back.srcArray == copy && read_back.dstPtr.ptr == back.data());
    }
    cudaGraphExec_t exec = nullptr;
    if (OK(cudaGraphInstantiate(&exec, with_array, 0))) {
      std::fill(back.begin(), back.end(), 0);
      if (OK(cudaGraphLaunch(exec, stream)) && OK(cudaStreamSynchronize(stream))) {
        EXPECT(same_rows(host, back, host_pitch));
      }
      SHOW(cudaGraphExecDestroy(exec));
    }
  }
  if (with_array != nullptr) SHOW(cudaGraphDestroy(with_array));
  cudaGraph_t captured = nullptr;
  if (OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal))) {
    SHOW(cudaMemcpy2DToArrayAsync(copy, 0, 0, host.data(), host_pitch, row, height,
                                  cudaMemcpyHostToDevice, stream));
    SHOW(cudaMemcpy2DFromArrayAsync(back.data(), host_pitch, copy, 0, 0, row, height,
                                    cudaMemcpyDeviceToHost, stream));
    cudaGraphExec_t exec = nullptr;
    if (OK(cudaStreamEndCapture(stream, &captured)) &&
        OK(cudaGraphInstantiate(&exec, captured, 0))) {
      host[0] = 7;  // after the capture: read at the launch
      std::fill(back.begin(), back.end(), 0);
      if (OK(cudaGraphLaunch(exec, stream)) && OK(cudaStreamSynchronize(stream))) {
        EXPECT(same_rows(host, back, host_pitch));
      }
      SHOW(cudaGraphExecDestroy(exec));
      SHOW(cudaGraphDestroy(captured));
    }
  }

  SHOW(cudaFree(linear));
  SHOW(cudaFree(fetched));
  SHOW(cudaFree(device));
  SHOW(cudaFreeArray(surface_array));
  SHOW(cudaFreeArray(copy));
  SHOW(cudaFreeArray(array));
  SHOW(cudaStreamDestroy(stream));
  return 0;
}
