#include "app/cli/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "app/cli/commands.h"
#include "core/util/error.h"

extern char** environ;

namespace descentlab::cli {
namespace {

std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> line;
  return line;
}

std::atomic<int> forwarded_signal{0};
extern "C" void remember_signal(int signal_number) {
  forwarded_signal.store(signal_number);
}

// A TCP port nobody listens on now (the kernel's pick), for rank 0's rendezvous store.
int free_port() {
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  if (sock < 0) throw IoError("--nproc", std::string("no socket to find a free port: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(sock, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string reason = std::strerror(errno);
    ::close(sock);
    throw IoError("--nproc", "could not find a free port on 127.0.0.1: " + reason);
  }
  ::close(sock);
  return ntohs(address.sin_port);
}

// This command's arguments without --nproc (and its value): what each rank runs.
std::vector<std::string> rank_arguments() {
  std::vector<std::string> arguments;
  const auto& line = command_line();
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == "--nproc") {
      ++i;
      continue;
    }
    if (line[i].rfind("--nproc=", 0) == 0) continue;
    arguments.push_back(line[i]);
  }
  return arguments;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status));
  return "ended";
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kInternal;
}

// This program by its own path, so each rank is named as it is (ps, and a run file's lock: "descentlab-cli:
// training, rank 0 of 2"); /proc/self/exe would name every rank "exe". A binary replaced since it started has no
// path left (" (deleted)"): then /proc/self/exe, which still reaches it.
std::string program_path() {
  std::string program = "/proc/self/exe";
  char resolved[4096] = {};
  const ssize_t length = ::readlink("/proc/self/exe", resolved, sizeof resolved - 1);
  if (length > 0 && ::access(resolved, X_OK) == 0) program.assign(resolved, static_cast<size_t>(length));
  return program;
}

// This process's environment with rank `rank`'s place in a world of `processes` on this machine.
std::vector<std::string> rank_environment(int rank, int processes, const std::string& port) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text = *entry;
    bool ours = false;
    for (const char* name : {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "MASTER_ADDR=", "MASTER_PORT="}) {
      ours = ours || text.rfind(name, 0) == 0;
    }
    if (!ours) environment.push_back(text);
  }
  environment.push_back("RANK=" + std::to_string(rank));
  environment.push_back("LOCAL_RANK=" + std::to_string(rank));
  environment.push_back("WORLD_SIZE=" + std::to_string(processes));
  environment.push_back("MASTER_ADDR=127.0.0.1");
  environment.push_back("MASTER_PORT=" + port);
  return environment;
}

// The ranks started on this machine, until each has ended.
class Ranks {
 public:
  explicit Ranks(int processes)
      : pids_(static_cast<size_t>(processes), 0),
        statuses_(static_cast<size_t>(processes), -1),
        ended_(static_cast<size_t>(processes), false) {}

  void kill_all(int signal_number) {
    for (size_t r = 0; r < pids_.size(); ++r) {
      if (pids_[r] > 0 && !ended_[r]) ::kill(pids_[r], signal_number);
    }
  }

  // Starts rank `rank`; on failure stops the ranks already started and throws, naming the rank.
  void spawn(int rank, const std::string& program, const std::vector<std::string>& arguments, const std::string& port) {
    std::vector<std::string> environment = rank_environment(rank, static_cast<int>(pids_.size()), port);
    std::vector<char*> argv{const_cast<char*>(command_line().front().c_str())};
    for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int failed = ::posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), envp.data());
    if (failed != 0) {
      kill_all(SIGTERM);
      throw IoError("--nproc", "could not start rank " + std::to_string(rank) + ": " + std::strerror(failed));
    }
    pids_[static_cast<size_t>(rank)] = pid;
  }

  // Waits for every rank. Once one has failed, the others get the collective timeout (and 30 s) to fail on their
  // own with their own message; then they are stopped, so that nothing is left running.
  void wait_for_all(double timeout_seconds) {
    bool waiting_for_failure = false;  // a rank failed: the others have until `deadline`
    std::chrono::steady_clock::time_point deadline{};
    auto running = static_cast<int>(pids_.size());
    while (running > 0) {
      if (const int signal_number = forwarded_signal.exchange(0)) kill_all(signal_number);
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        const int rank = ended(pid, status);
        const int code = exit_code_of(status);
        if (rank >= 0) --running;
        if (rank >= 0 && code != kOk && code != kInterrupted && !waiting_for_failure) {
          std::fprintf(stderr, "descentlab-cli --nproc: rank %d %s; waiting for the other ranks\n", rank,
                       describe_status(status).c_str());
          waiting_for_failure = true;
          deadline = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>((timeout_seconds + 30.0) * 1000.0));
        }
        continue;
      }
      if (waiting_for_failure && std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "descentlab-cli --nproc: stopping the ranks still running after the timeout\n");
        kill_all(SIGKILL);
        waiting_for_failure = false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // Rank 0's exit code, or else the first failing rank's: 0 when every rank succeeded.
  int exit_code() const {
    const int root = exit_code_of(statuses_.front());
    if (root != kOk) return root;
    for (size_t r = 1; r < statuses_.size(); ++r) {
      const int code = exit_code_of(statuses_[r]);
      if (code != kOk) return code;
    }
    return kOk;
  }

 private:
  std::vector<pid_t> pids_;
  std::vector<int> statuses_;
  std::vector<bool> ended_;

  // Records the end of process `pid`: its rank, or -1 when it is none of the ranks.
  int ended(pid_t pid, int status) {
    for (size_t r = 0; r < pids_.size(); ++r) {
      if (pids_[r] != pid) continue;
      ended_[r] = true;
      statuses_[r] = status;
      return static_cast<int>(r);
    }
    return -1;
  }
};

}  // namespace

void remember_command_line(int argc, char** argv) {
  stored_command_line().assign(argv, argv + argc);
}

const std::vector<std::string>& command_line() {
  return stored_command_line();
}

int launch_local_processes(int processes, double timeout_seconds) {
  const char* outer = std::getenv("WORLD_SIZE");
  if (outer && *outer) {
    throw Error("--nproc starts its own processes, but WORLD_SIZE=" + std::string(outer) +
                " says a launcher already started this one: drop --nproc");
  }
  const char* given_port = std::getenv("MASTER_PORT");
  const std::string port = given_port && *given_port ? given_port : std::to_string(free_port());

  // Ctrl-C reaches every rank from the terminal; the launcher stays to collect them (and forwards a signal sent to
  // it alone, such as a supervisor's SIGTERM).
  forwarded_signal.store(0);
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_interrupt {
  }, old_terminate{};
  sigaction(SIGINT, &action, &old_interrupt);
  sigaction(SIGTERM, &action, &old_terminate);

  Ranks ranks(processes);
  const std::string program = program_path();
  const std::vector<std::string> arguments = rank_arguments();
  for (int rank = 0; rank < processes; ++rank) ranks.spawn(rank, program, arguments, port);
  ranks.wait_for_all(timeout_seconds);
  sigaction(SIGINT, &old_interrupt, nullptr);
  sigaction(SIGTERM, &old_terminate, nullptr);
  return ranks.exit_code();
}

}  // namespace descentlab::cli
