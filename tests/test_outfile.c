/* test_outfile.c — files written whole or not at all and never through a link
 * (src/io/outfile.c), and the run directory's checks (src/files/rundir.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "files.h" /* defines: count_temporaries */
#include "files/modelfile.h"
#include "io/outfile.h"
#include "files/rundir.h"

static char dir[] = "/tmp/nmt-test-outfile-XXXXXX";

static char *in_dir(const char *name)
{
    static char path[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* The whole of a small file, or "" if it cannot be read. */
static const char *text_of(const char *path)
{
    static char buf[256];
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_whole_or_nothing(void)
{
    Error err;
    OutFile o;
    const char *path = in_dir("out.txt");
    put(path, "old\n");
    chmod(path, 0640);
    CHECK(outfile_open(&o, path, &err) == 0, "open over an existing file");
    fputs("new\n", o.f);
    fflush(o.f);
    CHECK(!strcmp(text_of(path), "old\n"), "the old file is untouched while the new one is written");
    CHECK(count_temporaries(dir) == 1, "one temporary file beside it");
    CHECK(outfile_commit(&o, &err) == 0, "commit");
    CHECK(!strcmp(text_of(path), "new\n"), "after commit the target holds the new text");
    CHECK(count_temporaries(dir) == 0, "no temporary file left after commit");
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640, "the old file's permissions are kept (0640)");

    CHECK(outfile_open(&o, path, &err) == 0, "open again");
    fputs("half", o.f);
    outfile_discard(&o);
    CHECK(!strcmp(text_of(path), "new\n") && count_temporaries(dir) == 0, "discard: the target untouched, nothing left");

    /* Reading the target while writing it: sort -o's case. */
    put(path, "a\nb\n");
    FILE *in = fopen(path, "r");
    CHECK(outfile_open(&o, path, &err) == 0, "open over a file being read");
    char line[16];
    while (fgets(line, sizeof line, in))
        fprintf(o.f, "<%c>\n", line[0]);
    fclose(in);
    CHECK(outfile_commit(&o, &err) == 0 && !strcmp(text_of(path), "<a>\n<b>\n"),
          "an input that is also the output is read whole before it is replaced");

    const char *fresh = in_dir("fresh.txt");
    mode_t mask = umask(022);
    CHECK(outfile_open(&o, fresh, &err) == 0 && outfile_commit(&o, &err) == 0, "a new file");
    umask(mask);
    CHECK(stat(fresh, &st) == 0 && (st.st_mode & 0777) == 0644, "a new file gets 0666 less the umask (0644)");
}

static void test_links_and_devices(void)
{
    Error err;
    OutFile o;
    const char *victim = in_dir("victim.txt"), *link = in_dir("link.txt");
    put(victim, "precious\n");
    symlink(victim, link);
    CHECK(outfile_open(&o, link, &err) == 0, "open at a symbolic link");
    fputs("written\n", o.f);
    CHECK(outfile_commit(&o, &err) == 0, "commit at a symbolic link");
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode), "the link is replaced by a regular file");
    CHECK(!strcmp(text_of(victim), "precious\n"), "the link's target is untouched");
    CHECK(!strcmp(text_of(link), "written\n"), "the new file holds the text");

    CHECK(outfile_open(&o, dir, &err) == -1 && strstr(err.msg, "Is a directory") && strstr(err.msg, dir),
          "a directory as the target is refused, naming it");
    CHECK(outfile_open(&o, "/nonexistent-dir/x", &err) == -1 && strstr(err.msg, "/nonexistent-dir/x") &&
              strstr(err.msg, "No such file"),
          "a missing directory: refused with the path and the reason");

    if (outfile_open(&o, "/dev/full", &err) == 0) {
        fputs("x\n", o.f);
        CHECK(outfile_commit(&o, &err) == -1 && strstr(err.msg, "/dev/full") && strstr(err.msg, "No space"),
              "a device is written in place; its failed write is reported");
        CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "the device is still there");
    } else {
        SKIP("a device is written in place", "/dev/full cannot be opened here");
        SKIP("the device is still there", "/dev/full cannot be opened here");
    }
    CHECK(outfile_open(&o, "/dev/null", &err) == 0 && (fputs("x", o.f), outfile_commit(&o, &err)) == 0 &&
              stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
          "/dev/null is written in place, not replaced");

    setenv("NMT_FULL_DISK_AT", "full.bin", 1);
    const char *full = in_dir("full.bin");
    put(full, "old\n");
    CHECK(outfile_open(&o, full, &err) == 0, "open under NMT_FULL_DISK_AT");
    fputs("new\n", o.f);
    CHECK(outfile_commit(&o, &err) == -1 && strstr(err.msg, "No space left") && strstr(err.msg, "full.bin") &&
              strstr(err.msg, "untouched"),
          "a full disk: the write fails, naming the file");
    CHECK(!strcmp(text_of(full), "old\n") && count_temporaries(dir) == 0, "a full disk: the old file whole, no temporary left");
    unsetenv("NMT_FULL_DISK_AT");

    CHECK(outfile_temporary_target("model.bin.tmp-a1B2c3") == strlen("model.bin"), "a temporary's name is recognised");
    CHECK(outfile_temporary_target("model.bin.tmp") == 0 && outfile_temporary_target("model.bin") == 0 &&
              outfile_temporary_target(".tmp-abcdef") == 0,
          "other names are not temporaries");
}

/* A fresh directory under dir. */
static const char *subdir(const char *name)
{
    const char *p = in_dir(name);
    mkdir(p, 0777);
    return p;
}

static void test_rundir(void)
{
    Error err;
    RunDir rd;
    RunInput none[1] = {{"the config file", NULL}};

    const char *made = in_dir("new/run");
    CHECK(rundir_open(made, none, 1, 0, &rd, &err) == 0 && rd.lock_fd >= 0, "a missing directory is made and locked");
    char lock[512];
    snprintf(lock, sizeof lock, "%s/train.lock", made);
    CHECK(!strncmp(text_of(lock), "nmt run directory", 17), "train.lock carries the mark");
    rundir_close(&rd);
    /* A run refused before it wrote anything takes away what rundir_open made. */
    const char *fresh = in_dir("fresh/a/b");
    CHECK(rundir_open(fresh, none, 1, 0, &rd, &err) == 0 && rd.made_lock && rd.made_dir &&
              !strcmp(rd.made_dir, in_dir("fresh")),
          "the outermost directory made is known");
    struct stat st;
    rundir_abandon(&rd);
    CHECK(stat(in_dir("fresh"), &st) != 0 && stat(dir, &st) == 0, "rundir_abandon: the directories it made are gone");
    const char *users = subdir("users");
    CHECK(rundir_open(users, none, 1, 0, &rd, &err) == 0 && rd.made_lock && !rd.made_dir, "an empty directory taken");
    rundir_abandon(&rd);
    snprintf(lock, sizeof lock, "%s/train.lock", users);
    CHECK(stat(users, &st) == 0 && stat(lock, &st) != 0, "... abandoned: it stays, without the train.lock made");
    made = in_dir("new/run");  /* (in_dir's buffers are reused) */
    CHECK(rundir_open(made, none, 1, 0, &rd, &err) == 0 && !rd.made_lock && !rd.made_dir, "a run directory taken");
    rundir_abandon(&rd);
    snprintf(lock, sizeof lock, "%s/train.lock", made);
    CHECK(stat(lock, &st) == 0, "... abandoned: its train.lock stays");

    const char *mine = subdir("mine");
    char cfg[512];
    snprintf(cfg, sizeof cfg, "%s/config.json", mine);
    put(cfg, "{}\n");
    CHECK(rundir_open(mine, none, 1, 0, &rd, &err) == -1 && strstr(err.msg, cfg) && strstr(err.msg, "not written by nmt"),
          "an unmarked directory with a config.json of the user's: refused, naming it");
    snprintf(lock, sizeof lock, "%s/train.lock", mine);
    CHECK(stat(lock, &st) != 0 && !strcmp(text_of(cfg), "{}\n"), "... before anything is written");

    const char *kept = subdir("kept");  /* a user's model kept in a directory of its own */
    char model[512];
    snprintf(model, sizeof model, "%s/model.bin", kept);
    put(model, MODELFILE_MAGIC "rest");
    CHECK(rundir_open(kept, none, 1, 0, &rd, &err) == -1 && strstr(err.msg, model) &&
              strstr(err.msg, "an nmt model file, but not of a run here"),
          "an unmarked directory holding an nmt model file at model.bin: refused, naming it");
    snprintf(lock, sizeof lock, "%s/train.lock", kept);
    CHECK(stat(lock, &st) != 0 && !strcmp(text_of(model), MODELFILE_MAGIC "rest"), "... before anything is written");
    const char *fake = subdir("fake");
    snprintf(model, sizeof model, "%s/model.bin", fake);
    put(model, "not a model\n");
    CHECK(rundir_open(fake, none, 1, 0, &rd, &err) == -1 && strstr(err.msg, model),
          "... but not one whose model.bin is not an nmt model file");

    const char *other = subdir("other");
    char notes[512];
    snprintf(notes, sizeof notes, "%s/notes.txt", other);
    put(notes, "mine\n");
    CHECK(rundir_open(other, none, 1, 0, &rd, &err) == 0, "a directory with only files of other names is taken");
    rundir_close(&rd);

    const char *old = subdir("old");  /* a run of nmt 0.4: an empty train.lock */
    snprintf(lock, sizeof lock, "%s/train.lock", old);
    put(lock, "");
    char log[512];
    snprintf(log, sizeof log, "%s/train.log", old);
    put(log, "{}\n");
    CHECK(rundir_open(old, none, 1, 0, &rd, &err) == 0, "an older run's directory (empty train.lock) is taken");
    rundir_close(&rd);
    CHECK(!strncmp(text_of(lock), "nmt run directory", 17), "... and marked");

    char left[512];
    snprintf(left, sizeof left, "%s/model.bin.tmp-Ab12Cd", old);
    put(left, "half");
    CHECK(rundir_open(old, none, 1, 0, &rd, &err) == 0 && stat(left, &st) != 0,
          "a killed run's temporary file is removed");
    rundir_close(&rd);

    const char *foreign = subdir("foreign");
    snprintf(lock, sizeof lock, "%s/train.lock", foreign);
    put(lock, "someone else's\n");
    CHECK(rundir_open(foreign, none, 1, 0, &rd, &err) == -1 && strstr(err.msg, lock),
          "a train.lock that is not nmt's: refused, naming it");

    const char *linked = subdir("linked");
    char victim[512], at[512];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    put(victim, "precious\n");
    snprintf(at, sizeof at, "%s/train.log", linked);
    symlink(victim, at);
    CHECK(rundir_open(linked, none, 1, 0, &rd, &err) == -1 && strstr(err.msg, at) && strstr(err.msg, "symbolic link"),
          "a symbolic link at train.log: refused, naming it");
    unlink(at);
    snprintf(at, sizeof at, "%s/train.lock", linked);
    symlink(victim, at);
    CHECK(rundir_open(linked, none, 1, 0, &rd, &err) == -1 && strstr(err.msg, at),
          "a symbolic link at train.lock: refused");
    CHECK(!strcmp(text_of(victim), "precious\n"), "... the link's target untouched");

    const char *run = subdir("run");
    CHECK(rundir_open(run, none, 1, 0, &rd, &err) == 0, "a run directory");
    rundir_close(&rd);
    char valid[512];
    snprintf(valid, sizeof valid, "%s/valid.tsv", run);
    put(valid, "a\tb\n");
    RunInput inputs[2] = {{"the config file", NULL}, {"data.train", valid}};
    CHECK(rundir_open(run, inputs, 2, 0, &rd, &err) == -1 && strstr(err.msg, "data.train") && strstr(err.msg, valid),
          "data.train is the run's valid.tsv: refused, naming the key and the file");
    char copy[512];
    snprintf(copy, sizeof copy, "%s/hardlink.tsv", dir);
    link(valid, copy);
    inputs[1].path = copy;
    CHECK(rundir_open(run, inputs, 2, 0, &rd, &err) == -1, "... also through another name (a hard link)");
    snprintf(cfg, sizeof cfg, "%s/config.json", run);
    put(cfg, "{}\n");
    RunInput config[1] = {{"the config file", cfg}};
    CHECK(rundir_open(run, config, 1, 0, &rd, &err) == -1 && strstr(err.msg, "the config file"),
          "the config is the run's own config.json, not resuming: refused");
    CHECK(rundir_open(run, config, 1, 1, &rd, &err) == 0, "... resuming: taken");
    /* fcntl locks belong to a process: the second nmt train is a child. */
    pid_t child = fork();
    if (child == 0) {
        RunDir second;
        _exit(rundir_open(run, none, 1, 0, &second, &err) == -1 && strstr(err.msg, "in use") ? 0 : 1);
    }
    int status = -1;
    waitpid(child, &status, 0);
    CHECK(child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "a second nmt train in a locked directory: refused, saying it is in use");
    rundir_close(&rd);

    CHECK(rundir_is_run_file("checkpoint-12.bin") && rundir_is_run_file("best.bin") &&
              !rundir_is_run_file("checkpoint-.bin") && !rundir_is_run_file("checkpoint-1.bin.bak") &&
              !rundir_is_run_file("notes.txt"),
          "the names nmt train writes");
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_whole_or_nothing();
    test_links_and_devices();
    test_rundir();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_report("test_outfile");
}
