// A real Slurm (Debian's munged, slurmctld and slurmd, started here on loopback with a generated
// configuration, stopped at the end) hands out a pool of 4 gvirtus GPUs as the generic resource
// "gvirtus", and tools/slurm/gvirtus-slurm-task-prolog turns each job's share into its
// GVIRTUS_VISIBLE_DEVICES. The pool is a gvirtus backend with 4 simulated devices; each job runs a
// driver program through gvirtus and must see exactly the GPUs Slurm gave it, by their physical
// identity: two jobs of gvirtus:2 run at once on disjoint GPUs, a third waits until one ends and
// then gets the GPUs it freed, a job killed with scancel gives its GPUs back, and a job that asked
// for none sees none. The suite skips, saying why, where Slurm cannot be started (not root).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/backend_process.h"
#include "support/free_port.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A daemon run in the foreground for the suite, its output in `log`; SIGTERM, then SIGKILL, at the
// end.
class Daemon {
 public:
  Daemon(const std::vector<std::string>& argv, const std::string& log) : log_(log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Daemon() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    if (!eventually(10000, [&] { return ::waitpid(pid_, nullptr, WNOHANG) == pid_; })) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  bool alive() const { return ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  std::string log() const { return read_file(log_); }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

constexpr int kPoolGpus = 4;

// Slurm with a gres "gvirtus" of kPoolGpus, and the pool's backend, for the whole suite.
class SlurmPool : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) {
      skip_reason_ =
          "slurmd must run as root to start jobs as their users, and this test is not root";
      return;
    }
    char tmpl[] = "/tmp/gvirtus-slurm-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    fs::create_directories(dir_ + "/munge");
    fs::permissions(dir_ + "/munge", fs::perms::owner_all);
    fs::create_directories(dir_ + "/state");
    fs::create_directories(dir_ + "/spool");
    fs::create_directories(dir_ + "/gres");
    fs::create_directories(dir_ + "/jobs");
    {
      std::ofstream key(dir_ + "/munge/key");
      for (int i = 0; i < 1024; ++i) key.put(static_cast<char>((i * 7919 + 13) & 0xff));
    }
    fs::permissions(dir_ + "/munge/key", fs::perms::owner_read);
    for (int i = 0; i < kPoolGpus; ++i) std::ofstream(dir_ + "/gres/gvirtus" + std::to_string(i));

    char host[256] = "";
    ::gethostname(host, sizeof host);
    const std::string node = std::string(host).substr(0, std::string(host).find('.'));
    const std::string ctld_port = std::to_string(free_loopback_port());
    const std::string slurmd_port = std::to_string(free_loopback_port());
    std::ofstream(dir_ + "/slurm.conf")
        << "ClusterName=gvirtus\n"
        << "SlurmctldHost=" << node << "(127.0.0.1)\n"
        << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
        << "AuthType=auth/munge\nCredType=cred/munge\n"
        << "AuthInfo=socket=" << dir_ << "/munge/socket\n"
        << "SlurmUser=root\nSlurmdUser=root\n"
        << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
        << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\n"
        << "SlurmdPidFile=" << dir_ << "/slurmd.pid\n"
        << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
        << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
        << "JobAcctGatherType=jobacct_gather/none\n"
        << "AccountingStorageType=accounting_storage/none\nMpiDefault=none\n"
        << "SchedulerType=sched/builtin\nReturnToService=2\n"
        // More CPUs than this machine has, so that only the GPUs ever make a job wait.
        << "SlurmdParameters=config_overrides\n"
        << "GresTypes=gvirtus\n"
        << "TaskProlog=" << GVIRTUS_SOURCE_DIR << "/tools/slurm/gvirtus-slurm-task-prolog\n"
        << "NodeName=" << node << " NodeAddr=127.0.0.1 CPUs=8 Gres=gvirtus:" << kPoolGpus
        << " State=UNKNOWN\n"
        << "PartitionName=pool Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
    std::ofstream(dir_ + "/gres.conf")
        << "Name=gvirtus File=" << dir_ << "/gres/gvirtus[0-" << kPoolGpus - 1 << "]\n";
    ::setenv("SLURM_CONF", (dir_ + "/slurm.conf").c_str(), 1);

    munged_ = std::make_unique<Daemon>(
        std::vector<std::string>{
            "munged", "--foreground", "--force", "--socket=" + dir_ + "/munge/socket",
            "--key-file=" + dir_ + "/munge/key", "--log-file=" + dir_ + "/munged.log",
            "--pid-file=" + dir_ + "/munge/pid", "--seed-file=" + dir_ + "/munge/seed"},
        dir_ + "/munged.out");
    if (!eventually(10000, [] { return fs::exists(dir_ + "/munge/socket"); })) {
      skip_reason_ = "munged did not start: " + munged_->log() + read_file(dir_ + "/munged.log");
      return;
    }
    slurmctld_ = std::make_unique<Daemon>(
        std::vector<std::string>{"slurmctld", "-D", "-c", "-f", dir_ + "/slurm.conf"},
        dir_ + "/slurmctld.log");
    slurmd_ = std::make_unique<Daemon>(
        std::vector<std::string>{"slurmd", "-D", "-N", node, "-f", dir_ + "/slurm.conf"},
        dir_ + "/slurmd.log");
    if (!eventually(30000, [] { return run("sinfo -h -o %T 2>/dev/null").output == "idle\n"; })) {
      skip_reason_ = "Slurm did not start: slurmctld: " + slurmctld_->log() +
                     "\nslurmd: " + slurmd_->log() + "\nsinfo: " + run("sinfo 2>&1").output;
      return;
    }

    // The pool: a backend whose 4 simulated GPUs the jobs share.
    backend_ = std::make_unique<BackendProcess>(
        BackendOptions{.extra_json = "",
                       .plugins = R"(["cuda-simulated"])",
                       .env = {"GVIRTUS_SIMULATED_DEVICES=" + std::to_string(kPoolGpus)}});
    // A job: its selection, the GPUs a driver program sees through gvirtus, then it waits until
    // the test releases it (so that jobs provably run at the same time).
    std::ofstream(dir_ + "/job.sh") << "#!/bin/sh\n"
                                    << "out=" << dir_ << "/jobs/$SLURM_JOB_ID\n"
                                    << "echo \"$GVIRTUS_VISIBLE_DEVICES\" > $out.visible\n"
                                    << "env " << GVIRTUS_STUB_PROGRAM_ENV
                                    << " GVIRTUS_CONFIG=" << backend_->client_config_file()
                                    << " LD_LIBRARY_PATH=" << GVIRTUS_DRIVER_STUB_DIR << " "
                                    << GVIRTUS_STATIC_DIR << "/devices > $out.devices 2>&1\n"
                                    << "touch $out.started\n"
                                    << "while [ ! -e $out.release ]; do sleep 0.1; done\n";
    fs::permissions(dir_ + "/job.sh", fs::perms::owner_all);
  }

  static void TearDownTestSuite() {
    if (!dir_.empty()) run("scancel --user=root 2>/dev/null");
    backend_.reset();
    slurmd_.reset();
    slurmctld_.reset();
    munged_.reset();
    ::unsetenv("SLURM_CONF");
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }

  // Submits job.sh asking for `gpus` pool GPUs (0: none asked); returns its id.
  static std::string submit(int gpus) {
    const std::string gres = gpus > 0 ? " --gres=gvirtus:" + std::to_string(gpus) : "";
    const auto [out, code] = run_merged("sbatch --parsable -n1" + gres + " -o " + dir_ +
                                        "/jobs/%j.out " + dir_ + "/job.sh");
    EXPECT_EQ(code, 0) << out;
    return out.substr(0, out.find_first_of("\n;"));
  }
  static bool started(const std::string& job, int ms = 30000) {
    return eventually(ms, [&] { return fs::exists(dir_ + "/jobs/" + job + ".started"); });
  }
  static void release(const std::string& job) { std::ofstream(dir_ + "/jobs/" + job + ".release"); }
  static std::string state(const std::string& job) {
    std::string s = run("squeue -h -j " + job + " -o %T 2>/dev/null").output;
    return s.substr(0, s.find('\n'));
  }
  static bool gone(const std::string& job) {
    return eventually(30000, [&] { return state(job).empty(); });
  }
  // The job's GVIRTUS_VISIBLE_DEVICES as its prolog set it.
  static std::string visible(const std::string& job) {
    std::string v = read_file(dir_ + "/jobs/" + job + ".visible");
    return v.substr(0, v.find('\n'));
  }
  // The physical indexes of the devices the job's program saw, in ordinal order, as "2,3".
  static std::string seen(const std::string& job) {
    const std::string out = read_file(dir_ + "/jobs/" + job + ".devices");
    const std::regex line(R"re(device \d+ name "gvirtus simulated device (\d+) \(no GPU\)")re");
    std::string physical;
    for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
      physical += (physical.empty() ? "" : ",") + (*it)[1].str();
    }
    return physical;
  }
  static std::set<std::string> entries(const std::string& list) {
    std::set<std::string> out;
    std::stringstream in(list);
    for (std::string e; std::getline(in, e, ',');) out.insert(e);
    return out;
  }
  static std::string diagnostics(const std::string& job) {
    return "job " + job + " output: " + read_file(dir_ + "/jobs/" + job + ".out") +
           "\ndevices: " + read_file(dir_ + "/jobs/" + job + ".devices") +
           "\nscontrol: " + run("scontrol show job -d " + job + " 2>&1").output;
  }

  static inline std::string skip_reason_;
  static inline std::string dir_;
  static inline std::unique_ptr<Daemon> munged_, slurmctld_, slurmd_;
  static inline std::unique_ptr<BackendProcess> backend_;
};

TEST_F(SlurmPool, two_jobs_run_at_once_on_disjoint_gpus_and_a_third_waits_for_one) {
  const std::string a = submit(2), b = submit(2);
  ASSERT_TRUE(started(a)) << diagnostics(a);
  ASSERT_TRUE(started(b)) << diagnostics(b);
  const std::string c = submit(2);
  EXPECT_TRUE(eventually(5000, [&] { return state(c) == "PENDING"; })) << state(c);
  EXPECT_FALSE(started(c, 2000)) << "four GPUs are taken: the third job must wait";

  // Each sees exactly its two, through gvirtus, by their physical identity.
  EXPECT_EQ(entries(visible(a)).size(), 2u) << diagnostics(a);
  EXPECT_EQ(seen(a), visible(a)) << diagnostics(a);
  EXPECT_EQ(seen(b), visible(b)) << diagnostics(b);
  std::set<std::string> both = entries(visible(a));
  for (const std::string& d : entries(visible(b))) {
    EXPECT_TRUE(both.insert(d).second) << "GPU " << d << " went to both jobs";
  }
  EXPECT_EQ(both, (std::set<std::string>{"0", "1", "2", "3"}));

  release(a);
  ASSERT_TRUE(started(c)) << diagnostics(c);
  EXPECT_EQ(entries(visible(c)), entries(visible(a))) << "the GPUs the first job gave back";
  EXPECT_EQ(seen(c), visible(c)) << diagnostics(c);
  release(b);
  release(c);
  EXPECT_TRUE(gone(b) && gone(c));
}

TEST_F(SlurmPool, a_job_killed_with_scancel_gives_its_gpus_back) {
  const std::string all = submit(kPoolGpus);
  ASSERT_TRUE(started(all)) << diagnostics(all);
  EXPECT_EQ(entries(visible(all)), (std::set<std::string>{"0", "1", "2", "3"}));
  const std::string next = submit(1);
  EXPECT_FALSE(started(next, 2000)) << "every GPU is taken";
  ASSERT_EQ(run("scancel " + all).status, 0);  // never released: killed
  ASSERT_TRUE(started(next)) << diagnostics(next);
  EXPECT_EQ(entries(visible(next)).size(), 1u) << diagnostics(next);
  EXPECT_EQ(seen(next), visible(next)) << diagnostics(next);
  release(next);
  EXPECT_TRUE(gone(next));
}

TEST_F(SlurmPool, a_job_that_asked_for_no_gpu_sees_none) {
  const std::string job = submit(0);
  ASSERT_TRUE(started(job)) << diagnostics(job);
  EXPECT_EQ(visible(job), "none");
  EXPECT_NE(read_file(dir_ + "/jobs/" + job + ".devices").find("cuInit -> 100"), std::string::npos)
      << "CUDA_ERROR_NO_DEVICE\n"
      << diagnostics(job);
  release(job);
  EXPECT_TRUE(gone(job));
}

}  // namespace
}  // namespace gvirtus::testing
