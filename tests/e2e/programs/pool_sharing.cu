// A memory pool and a pointer of it shared between two applications, as CUDA's IPC samples share
// them: the first creates a pool that may be exported as a POSIX descriptor, allocates from it and
// fills the allocation, then passes the pool's descriptor (SCM_RIGHTS over a unix socket) and the
// pointer's export data to the second, a process of its own (through gvirtus a session of its own
// on the same backend), forked before either initializes CUDA. The second imports the pool and
// the pointer, checks the values, writes new ones and frees its import; the first then checks the
// new values.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

namespace {

constexpr int kCount = 4096;
constexpr size_t kBytes = kCount * sizeof(int);
constexpr cudaMemAllocationHandleType kPosix = cudaMemHandleTypePosixFileDescriptor;

struct Message {
  bool exported;  // a descriptor follows the message
  cudaMemPoolPtrExportData pointer;
};

bool send_message(int socket, const Message& message, int fd) {
  iovec part{const_cast<Message*>(&message), sizeof message};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (message.exported) {
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    cmsghdr* rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(rights), &fd, sizeof fd);
  }
  return sendmsg(socket, &header, 0) == static_cast<ssize_t>(sizeof message);
}

bool receive_message(int socket, Message& message, int& fd) {
  iovec part{&message, sizeof message};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  if (recvmsg(socket, &header, MSG_WAITALL) != static_cast<ssize_t>(sizeof message)) return false;
  const cmsghdr* rights = CMSG_FIRSTHDR(&header);
  if (rights != nullptr && rights->cmsg_type == SCM_RIGHTS) {
    std::memcpy(&fd, CMSG_DATA(rights), sizeof fd);
  }
  return true;
}

bool all_are(const std::vector<int>& values, int times, int plus) {
  for (int i = 0; i < kCount; ++i) {
    if (values[i] != i * times + plus) return false;
  }
  return true;
}

int second_application(int socket) {
  Message message{};
  int fd = -1;
  if (!receive_message(socket, message, fd)) return 2;
  if (!message.exported) {
    std::printf("second application: nothing to import\n");
  } else {
    cudaMemPool_t pool = nullptr;
    int* values = nullptr;
    void* const handle = reinterpret_cast<void*>(intptr_t{fd});
    if (OK(cudaMemPoolImportFromShareableHandle(&pool, handle, kPosix, 0)) &&
        OK(cudaMemPoolImportPointer(reinterpret_cast<void**>(&values), pool, &message.pointer))) {
      std::vector<int> seen(kCount, 0);
      if (OK(cudaMemcpy(seen.data(), values, kBytes, cudaMemcpyDeviceToHost))) {
        EXPECT(all_are(seen, 3, 0));
      }
      for (int i = 0; i < kCount; ++i) seen[i] = i * 5 + 1;
      SHOW(cudaMemcpy(values, seen.data(), kBytes, cudaMemcpyHostToDevice));
      SHOW(cudaFree(values));
      SHOW(cudaMemPoolDestroy(pool));
    }
    close(fd);
  }
  char done = 1;
  return write(socket, &done, 1) == 1 ? 0 : 3;
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the two applications' lines in the order printed
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) return 2;
  const pid_t child = fork();
  if (child == 0) {
    close(sockets[0]);
    std::exit(second_application(sockets[1]));
  }
  close(sockets[1]);

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = kPosix;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  const cudaStream_t stream = nullptr;  // the legacy stream
  int* values = nullptr;
  Message message{};
  int fd = -1;
  const bool made =
      OK(cudaMemPoolCreate(&pool, &props)) &&
      OK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&values), kBytes, pool, stream));
  if (made) {
    std::vector<int> host(kCount);
    for (int i = 0; i < kCount; ++i) host[i] = i * 3;
    SHOW(cudaMemcpyAsync(values, host.data(), kBytes, cudaMemcpyHostToDevice, stream));
    SHOW(cudaStreamSynchronize(stream));
    message.exported = OK(cudaMemPoolExportToShareableHandle(&fd, pool, kPosix, 0)) &&
                       OK(cudaMemPoolExportPointer(&message.pointer, values));
  }
  char done = 0;
  const bool answered = send_message(sockets[0], message, fd) && read(sockets[0], &done, 1) == 1;
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("second application done: %s\n",
              answered && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "yes" : "no");
  if (made) {
    std::vector<int> seen(kCount, 0);
    if (message.exported && OK(cudaMemcpy(seen.data(), values, kBytes, cudaMemcpyDeviceToHost))) {
      EXPECT(all_are(seen, 5, 1));
    }
    SHOW(cudaFreeAsync(values, stream));
    SHOW(cudaStreamSynchronize(stream));
    SHOW(cudaMemPoolDestroy(pool));
  }
  if (fd >= 0) close(fd);
  return 0;
}
