// Shareable handles between two processes, each a session of its own (cuda rows 288-293), as
// CUDA IPC programs and PyTorch's expandable segments use them: the exporter passes POSIX
// descriptors to the importer over a unix socket (SCM_RIGHTS), the pointer's export data as bytes.
//  - a physical allocation (cuMemCreate with a POSIX descriptor type), mapped by both: each sees
//    the bytes the other wrote (the simulated device shares its pages between sessions too);
//  - a memory pool and a pointer of it: the importer imports the pool, then the pointer, which is
//    device memory of its session, as large as the exporter's allocation, until it frees it;
//  - refusals: a Windows handle type, a pool made without handle types, a descriptor gvirtus did
//    not make.
// The importer is forked before either process initializes the driver (a child forked after is
// refused, as natively). Each call is printed with its result for the test to find
// (simulated_mode_test.cpp).
#include <cuda.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "show_calls.h"

namespace {

constexpr size_t kPoolBytes = 1 << 20;

struct Message {
  CUmemPoolPtrExportData pointer;
  size_t physical_bytes;
};

// Sends `message` and two descriptors over `socket`.
bool send_handles(int socket, const Message& message, int physical, int pool) {
  iovec part{const_cast<Message*>(&message), sizeof message};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  cmsghdr* rights = CMSG_FIRSTHDR(&header);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {physical, pool};
  std::memcpy(CMSG_DATA(rights), fds, sizeof fds);
  return sendmsg(socket, &header, 0) == static_cast<ssize_t>(sizeof message);
}

bool receive_handles(int socket, Message& message, int& physical, int& pool) {
  iovec part{&message, sizeof message};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  if (recvmsg(socket, &header, MSG_WAITALL) != static_cast<ssize_t>(sizeof message)) return false;
  cmsghdr* rights = CMSG_FIRSTHDR(&header);
  if (rights == nullptr || rights->cmsg_type != SCM_RIGHTS) return false;
  int fds[2];
  std::memcpy(fds, CMSG_DATA(rights), sizeof fds);
  physical = fds[0];
  pool = fds[1];
  return true;
}

// Maps `handle` (of `bytes`) at a new reservation, readable and writable by `device`.
CUdeviceptr map(CUmemGenericAllocationHandle handle, size_t bytes, CUdevice device) {
  CUdeviceptr address = 0;
  SHOW(cuMemAddressReserve(&address, bytes, 0, 0, 0));
  SHOW(cuMemMap(address, bytes, 0, handle, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SHOW(cuMemSetAccess(address, bytes, &access, 1));
  return address;
}

bool words_are(CUdeviceptr address, size_t bytes, unsigned value) {
  std::vector<unsigned> host(bytes / sizeof(unsigned));
  if (cuMemcpyDtoH(host.data(), address, bytes) != CUDA_SUCCESS) return false;
  for (unsigned word : host) {
    if (word != value) return false;
  }
  return true;
}

int importer(int socket) {
  Message message{};
  int physical_fd = -1, pool_fd = -1;
  if (!receive_handles(socket, message, physical_fd, pool_fd)) return 2;
  CUdevice device = 0;
  show_primary_context(device);
  CUmemGenericAllocationHandle handle = 0;
  SHOW(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(intptr_t{physical_fd}),
                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  const CUdeviceptr shared = map(handle, message.physical_bytes, device);
  std::printf("importer reads the exporter's bytes: %s\n",
              words_are(shared, message.physical_bytes, 0x12345678u) ? "yes" : "no");
  SHOW(cuMemsetD32(shared, 0x9abcdef0u, message.physical_bytes / sizeof(unsigned)));
  SHOW(cuCtxSynchronize());

  CUmemoryPool pool = nullptr;
  SHOW(cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(intptr_t{pool_fd}),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUdeviceptr pointer = 0;
  SHOW(cuMemPoolImportPointer(&pointer, pool, &message.pointer));
  CUdeviceptr base = 0;
  size_t size = 0;
  SHOW(cuMemGetAddressRange(&base, &size, pointer));
  std::printf("imported pointer: its allocation's start %s, %zu bytes\n",
              base == pointer ? "yes" : "no", size);
  SHOW(cuMemsetD8(pointer, 7, kPoolBytes));  // the session's device memory, all of it
  SHOW(cuMemsetD8(pointer, 7, kPoolBytes + 1));
  SHOW(cuCtxSynchronize());
  SHOW(cuMemFree(pointer));
  SHOW(cuMemPoolDestroy(pool));

  // A descriptor gvirtus did not make.
  const int unrelated = open("/dev/null", O_RDONLY | O_CLOEXEC);
  CUmemGenericAllocationHandle refused = 0;
  SHOW(cuMemImportFromShareableHandle(&refused, reinterpret_cast<void*>(intptr_t{unrelated}),
                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  SHOW(cuMemUnmap(shared, message.physical_bytes));
  SHOW(cuMemAddressFree(shared, message.physical_bytes));
  SHOW(cuMemRelease(handle));
  char done = 1;
  return write(socket, &done, 1) == 1 ? 0 : 3;
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) return 2;
  const pid_t child = fork();
  if (child == 0) {
    close(sockets[0]);
    std::exit(importer(sockets[1]));
  }
  close(sockets[1]);

  CUdevice device = 0;
  show_primary_context(device);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granularity = 0;
  SHOW(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t bytes = granularity;
  CUmemGenericAllocationHandle handle = 0;
  SHOW(cuMemCreate(&handle, bytes, &prop, 0));
  const CUdeviceptr shared = map(handle, bytes, device);
  SHOW(cuMemsetD32(shared, 0x12345678u, bytes / sizeof(unsigned)));
  SHOW(cuCtxSynchronize());
  int physical_fd = -1;
  SHOW(cuMemExportToShareableHandle(&physical_fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                    0));

  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool pool = nullptr;
  SHOW(cuMemPoolCreate(&pool, &props));
  CUstream stream = nullptr;
  SHOW(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr pointer = 0;
  SHOW(cuMemAllocFromPoolAsync(&pointer, kPoolBytes, pool, stream));
  SHOW(cuStreamSynchronize(stream));
  int pool_fd = -1;
  SHOW(cuMemPoolExportToShareableHandle(&pool_fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                        0));
  Message message{};
  message.physical_bytes = bytes;
  SHOW(cuMemPoolExportPointer(&message.pointer, pointer));

  // Refused: a Windows type, and a pool made without handle types (the driver's refusal).
  int refused = -1;
  SHOW(cuMemPoolExportToShareableHandle(&refused, pool, CU_MEM_HANDLE_TYPE_WIN32, 0));
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  CUmemoryPool private_pool = nullptr;
  SHOW(cuMemPoolCreate(&private_pool, &props));
  SHOW(cuMemPoolExportToShareableHandle(&refused, private_pool,
                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));

  const bool sent = send_handles(sockets[0], message, physical_fd, pool_fd);
  char done = 0;
  const bool answered = sent && read(sockets[0], &done, 1) == 1 && done == 1;
  int status = 0;
  waitpid(child, &status, 0);
  const bool importer_ok = answered && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::printf("importer done: %s\n", importer_ok ? "yes" : "no");
  const bool sees = words_are(shared, bytes, 0x9abcdef0u);
  std::printf("exporter reads the importer's bytes: %s\n", sees ? "yes" : "no");

  SHOW(cuMemFreeAsync(pointer, stream));
  SHOW(cuStreamSynchronize(stream));
  SHOW(cuMemPoolDestroy(pool));
  SHOW(cuMemPoolDestroy(private_pool));
  SHOW(cuMemUnmap(shared, bytes));
  SHOW(cuMemAddressFree(shared, bytes));
  SHOW(cuMemRelease(handle));
  close(physical_fd);
  close(pool_fd);
  return importer_ok && sees ? 0 : 1;
}
