// maxrss runs a command and prints its peak resident set size in KiB on stderr, as
// the last line. A test helper: a child started straight from a Go test inherits the
// test process's peak RSS through vfork (the kernel keeps the largest RSS the process
// had, and before exec it shares the parent's memory), so the benchmark starts the
// measured process from here, with fork, whose memory is this small program's.
#include <cstdio>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: maxrss COMMAND [ARG...]\n"); return 2; }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 2; }
    if (pid == 0) { execvp(argv[1], argv + 1); perror(argv[1]); _exit(127); }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) { perror("wait4"); return 2; }
    fprintf(stderr, "maxrss %ld\n", ru.ru_maxrss);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}
