/*
 * The program of every process of a suite test's chain (host/testing/suite/leaf-program.ts
 * compiles it with the system cc against the node's libperl). The process is this program, run
 * through a link named as the test says, with exactly the argv the test gives (argv[0] its `exe`,
 * then its `args`), as upstream's runner starts its own binary; the perl interpreter embedded in
 * it (perlembed(1)) runs leaf.pl, read from standard input. A perl executable would need a `-`
 * (or the script's path) in argv before the test's arguments, which proc.args and proc.cmdline
 * would show.
 * Consumes: leaf.pl on stdin; the environment leaf.pl reads (RAE_SUITE_PLAN, RAE_SUITE_STAGE).
 * Produces: leaf.pl's exit status.
 */
#include <EXTERN.h>
#include <perl.h>

EXTERN_C void boot_DynaLoader(pTHX_ CV *cv);

/* Lets leaf.pl load XS modules (POSIX, Socket, ...) as perl itself does. */
static void xs_init(pTHX) {
  newXS("DynaLoader::boot_DynaLoader", boot_DynaLoader, __FILE__);
}

int main(int argc, char **argv, char **env) {
  /* perl's own argv, not the process's: the program from stdin, no argument */
  char *perl_argv[] = {"perl", "-", NULL};
  PERL_SYS_INIT3(&argc, &argv, &env);
  PerlInterpreter *my_perl = perl_alloc();
  perl_construct(my_perl);
  PL_exit_flags |= PERL_EXIT_DESTRUCT_END;
  int status = perl_parse(my_perl, xs_init, 2, perl_argv, env);
  if (status == 0) status = perl_run(my_perl);
  perl_destruct(my_perl);
  perl_free(my_perl);
  PERL_SYS_TERM();
  return status;
}
