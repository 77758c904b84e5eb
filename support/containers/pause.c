/* The pod sandbox process for the test images (CRI's "pause"): waits for signals, reaps
 * children, exits on TERM or INT. Built static by images.ts: gcc -Os -static, then strip. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) {} }

int main(void) {
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
