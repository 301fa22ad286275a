#include "engine/job_key.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/crypto.h"
#include "common/unique_fd.h"

namespace tent {

namespace {

// Trailing newlines and blanks are not part of the key (editors add them).
std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    return s;
}

Result<JobKey> key_of(const std::string& text, const std::string& where) {
    if (text.size() < kMinJobKeyLength)
        return Status(Code::InvalidArgument, where + ": the job key is " + std::to_string(text.size()) +
                                                 " bytes long; at least " + std::to_string(kMinJobKeyLength) +
                                                 " are needed (e.g. openssl rand -hex 32)");
    return JobKey(text.begin(), text.end());
}

// mkdir -p with mode 0700 for what it creates.
Status make_parent_directories(const std::string& path) {
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        const std::string dir = path.substr(0, slash);
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
            return Status::from_errno(errno, "job_key_file: cannot create directory " + dir);
    }
    return Status::ok();
}

// Writes a fresh key to a private temporary file and links it into place:
// of several processes creating it at once, exactly one wins and all read
// the winner's key.
Status create_key_file(const std::string& path) {
    if (Status s = make_parent_directories(path); !s) return s;
    std::uint8_t raw[32];
    if (Status s = random_bytes(raw); !s) return s;
    static const char* hex = "0123456789abcdef";
    std::string text;
    for (std::uint8_t b : raw) {
        text += hex[b >> 4];
        text += hex[b & 15];
    }
    text += '\n';
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        if (!fd) return Status::from_errno(errno, "job_key_file: cannot create " + tmp);
        if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) || ::fsync(fd.get()) != 0) {
            Status s = Status::from_errno(errno, "job_key_file: cannot write " + tmp);
            ::unlink(tmp.c_str());
            return s;
        }
    }
    const int linked = ::link(tmp.c_str(), path.c_str());
    const int link_errno = errno;
    ::unlink(tmp.c_str());
    if (linked != 0 && link_errno != EEXIST) return Status::from_errno(link_errno, "job_key_file: cannot create " + path);
    return Status::ok();
}

Result<JobKey> read_key_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd && errno == ENOENT) {
        if (Status s = create_key_file(path); !s) return s;
        fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    }
    if (!fd) return Status::from_errno(errno, "job_key_file: cannot open " + path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Status::from_errno(errno, "job_key_file: stat " + path);
    if (!S_ISREG(st.st_mode)) return Status(Code::InvalidArgument, "job_key_file " + path + " is not a regular file");
    if (st.st_uid != ::geteuid())
        return Status(Code::InvalidArgument, "job_key_file " + path + " belongs to another user (uid " +
                                                 std::to_string(st.st_uid) + ")");
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return Status(Code::InvalidArgument, "job_key_file " + path + " has mode " + mode +
                                                 ": group or others may read or change the key; chmod 600 " + path);
    }
    std::string text;
    char buf[512];
    // Bounded: a key file is small; more than 4 KiB is not a key file.
    for (int round = 0; round < 8; ++round) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Status::from_errno(errno, "job_key_file: read " + path);
        if (n == 0) return key_of(trimmed(text), "job_key_file " + path);
        text.append(buf, static_cast<std::size_t>(n));
    }
    return Status(Code::InvalidArgument, "job_key_file " + path + " is larger than 4 KiB: not a key file");
}

} // namespace

std::string expand_home(const std::string& path) {
    if (path.rfind("~/", 0) != 0) return path;
    const char* home = std::getenv("HOME");
    std::string dir = home && *home ? home : "";
    if (dir.empty())
        if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir) dir = pw->pw_dir;
    return dir + path.substr(1);
}

Result<std::shared_ptr<JobKeyCell>> load_job_key(const Config& config) {
    if (!config.get_bool(Knob::Auth)) return JobKeyCell::off();
    if (const std::string& text = config.get_string(Knob::JobKey); !text.empty()) {
        auto key = key_of(text, "job_key (" + config.source(Knob::JobKey).to_string() + ")");
        if (!key) return key.status();
        return JobKeyCell::with(std::move(*key));
    }
    const std::string& file = config.get_string(Knob::JobKeyFile);
    if (file == "none") return JobKeyCell::with(std::nullopt);
    if (file.empty()) return Status(Code::InvalidArgument, "job_key_file is empty: name a file, or none");
    auto key = read_key_file(expand_home(file));
    if (!key) return key.status();
    return JobKeyCell::with(std::move(*key));
}

} // namespace tent
