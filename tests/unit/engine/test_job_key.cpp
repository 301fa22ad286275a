// Where the job's key comes from: job_key (TENT_JOB_KEY) first; else
// job_key_file, created with a random key and mode 0600 (directory 0700)
// on first use, read back unchanged later, and refused with an error
// naming the file and the fix when group or others may read or write it;
// short keys are refused; none leaves the key to the program; auth = false
// needs none.
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "engine/job_key.h"
#include "../config/test_support.h"

using namespace tent;

namespace {

Source api() {
    Source s;
    s.kind = Source::Kind::Api;
    return s;
}

Config with_file(const std::string& path) {
    Config c;
    cr_assert(c.set(Knob::JobKeyFile, path, api()).is_ok());
    return c;
}

std::string text_of(const JobKey& k) { return std::string(k.begin(), k.end()); }

} // namespace

Test(job_key, the_file_is_created_private_on_first_use_and_read_back_later) {
    test::TempDir tmp;
    const std::string& dir = tmp.path();
    const std::string path = dir + "/sub/job.key";  // the directory is made too
    auto first = load_job_key(with_file(path));
    cr_assert(first.is_ok(), "%s", first.status().to_string().c_str());
    cr_assert((*first)->required());
    auto key = (*first)->get();
    cr_assert(key.has_value());
    cr_expect_geq(key->size(), kMinJobKeyLength);
    struct stat st {};
    cr_assert_eq(::stat(path.c_str(), &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600u, "mode %o", st.st_mode & 0777);
    cr_assert_eq(::stat((dir + "/sub").c_str(), &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0700u, "directory mode %o", st.st_mode & 0777);

    auto second = load_job_key(with_file(path));
    cr_assert(second.is_ok());
    cr_expect(*(*second)->get() == *key, "a second process reads the same key");
    cr_expect(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK) != 0, "no temporary file left");
}

Test(job_key, a_file_group_or_others_may_read_is_refused_with_the_fix) {
    test::TempDir tmp;
    const std::string path = tmp.path() + "/job.key";
    cr_assert(load_job_key(with_file(path)).is_ok());
    for (mode_t mode : {0640, 0604, 0620, 0602}) {
        cr_assert_eq(::chmod(path.c_str(), mode), 0);
        auto r = load_job_key(with_file(path));
        cr_assert(!r.is_ok(), "mode %o accepted", mode);
        const std::string m = r.status().message();
        cr_expect(m.find(path) != std::string::npos && m.find("chmod 600") != std::string::npos, "%s", m.c_str());
    }
}

Test(job_key, short_keys_are_refused) {
    test::TempDir tmp;
    const std::string path = tmp.path() + "/job.key";
    {
        std::ofstream out(path);
        out << "tooshort\n";
    }
    cr_assert_eq(::chmod(path.c_str(), 0600), 0);
    auto r = load_job_key(with_file(path));
    cr_assert(!r.is_ok());
    cr_expect(r.status().message().find("at least 16") != std::string::npos, "%s", r.status().message().c_str());

    Config c;
    cr_assert(c.set(Knob::JobKey, "short", api()).is_ok());
    cr_expect(!load_job_key(c).is_ok());
}

Test(job_key, job_key_wins_over_the_file_and_none_waits_for_the_program) {
    test::TempDir tmp;
    Config c = with_file(tmp.path() + "/never-created.key");
    cr_assert(c.set(Knob::JobKey, "0123456789abcdef-the-job", api()).is_ok());
    auto r = load_job_key(c);
    cr_assert(r.is_ok());
    cr_expect_eq(text_of(*(*r)->get()), "0123456789abcdef-the-job");

    Config later = with_file("none");
    auto l = load_job_key(later);
    cr_assert(l.is_ok());
    cr_expect((*l)->required());
    cr_expect(!(*l)->get().has_value(), "no key until the program gives one");
    (*l)->set(JobKey(20, 'k'));
    cr_expect((*l)->get().has_value());

    Config off;
    cr_assert(off.set(Knob::Auth, "false", api()).is_ok());
    auto o = load_job_key(off);
    cr_assert(o.is_ok());
    cr_expect(!(*o)->required());
}
