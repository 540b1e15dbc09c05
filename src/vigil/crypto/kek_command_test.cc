// The key-management hook: a key-encryption key whose private half only a command can use. The
// command here is the openssl command line decrypting with a key file that this code never
// reads, standing in for an HSM or a KMS client; keys are made by the openssl command line at
// test time.
#include "vigil/crypto/kek_command.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/envelope.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"

namespace vigil::crypto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::ReadFile;
using ::vigil::testing::StatusIs;

constexpr KekCommandOptions kOneSecond{.timeout = std::chrono::milliseconds(1000)};

class KekCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/kek_command_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // "<name>.pem" (0600) and "<name>.pub.pem", made by the openssl command line.
  void MakeKey(const std::string& name) {
    std::vector<std::string> args = {"genpkey", "-algorithm", name == "sm2" ? "SM2" : "RSA"};
    if (name != "sm2") args.insert(args.end(), {"-pkeyopt", "rsa_keygen_bits:2048"});
    args.insert(args.end(), {"-out", Path(name + ".pem")});
    ASSERT_EQ(::vigil::testing::RunProcess("/usr/bin/openssl", args, Path("openssl.log")), 0)
        << ReadFile(Path("openssl.log"));
    ::chmod(Path(name + ".pem").c_str(), 0600);
    ASSERT_EQ(::vigil::testing::RunProcess(
                  "/usr/bin/openssl",
                  {"pkey", "-in", Path(name + ".pem"), "-pubout", "-out", Path(name + ".pub.pem")},
                  Path("openssl.log")),
              0);
  }

  // The hook an operator would write: the wrapped key in, base64, the data key out.
  std::string DecryptCommand(const std::string& name) const {
    std::string command =
        absl::StrCat("base64 -d | openssl pkeyutl -decrypt -inkey '", Path(name + ".pem"), "'");
    if (name != "sm2") {
      absl::StrAppend(&command,
                      " -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt "
                      "rsa_mgf1_md:sha256");
    }
    return absl::StrCat(command, " | base64 -w0");
  }

  // The public key of "name" with "command" as its hook.
  KeyEncryptionKey Hooked(const std::string& name, const std::string& command,
                          KekCommandOptions options = {}) {
    absl::StatusOr<KeyEncryptionKey> kek =
        KeyEncryptionKeyWithCommand(Path(name + ".pub.pem"), command, options);
    EXPECT_TRUE(kek.ok()) << kek.status();
    return *std::move(kek);
  }

  std::string dir_;
};

TEST_F(KekCommandTest, TheCommandUnwrapsWhatThePublicKeyWrappedAndSeesTheKeyIdAndAlgorithm) {
  // Variables of the same name in this process's environment are replaced, not passed on.
  ::setenv("VIGIL_KEK_ID", "not-the-key-id", 1);
  for (const std::string name : {"rsa", "sm2"}) {
    SCOPED_TRACE(name);
    MakeKey(name);
    ASSERT_OK_AND_ASSIGN(const KeyEncryptionKey pub,
                         KeyEncryptionKey::LoadPublicKeyFile(Path(name + ".pub.pem")));
    const KeyEncryptionKey kek = Hooked(
        name, absl::StrCat("printf '%s %s\\n' \"$VIGIL_KEK_ID\" \"$VIGIL_KEK_ALGORITHM\" > '",
                           Path("env.txt"), "'; ", DecryptCommand(name)));
    EXPECT_TRUE(kek.can_unwrap());
    EXPECT_TRUE(kek.has_unwrap_hook());
    EXPECT_EQ(kek.key_id(), pub.key_id());
    EXPECT_EQ(kek.algorithm(), pub.algorithm());
    for (const size_t size : {size_t{32}, size_t{48}}) {
      const std::string data_key(size, static_cast<char>(0xa0 + size));
      ASSERT_OK_AND_ASSIGN(const std::string wrapped, pub.Wrap(data_key));
      ASSERT_OK_AND_ASSIGN(const std::string back, kek.Unwrap(wrapped));
      EXPECT_EQ(back, data_key);
    }
    EXPECT_EQ(ReadFile(Path("env.txt")),
              absl::StrCat(pub.key_id(), " ", name == "sm2" ? "sm2" : "rsa-oaep-sha256", "\n"));
    // The hooked key wraps like its public half.
    ASSERT_OK_AND_ASSIGN(const std::string wrapped, kek.Wrap(std::string(32, 'k')));
    EXPECT_EQ(*kek.Unwrap(wrapped), std::string(32, 'k'));
  }
  ::unsetenv("VIGIL_KEK_ID");
}

TEST_F(KekCommandTest, UnwrapsFromSeveralThreadsAtOnceAndPassesNoOtherDescriptors) {
  MakeKey("sm2");
  // A descriptor this process leaves open across exec: the command must not get it.
  const int null_fd = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(null_fd, 0);
  const int leaked = ::fcntl(null_fd, F_DUPFD, 57);  // not close-on-exec
  ::close(null_fd);
  ASSERT_GE(leaked, 57);
  const KeyEncryptionKey kek =
      Hooked("sm2", absl::StrCat("if [ -e /proc/$$/fd/", leaked, " ]; then echo 'fd ", leaked,
                                 " is open' >&2; exit 9; fi; ", DecryptCommand("sm2")));
  ASSERT_OK_AND_ASSIGN(const std::string wrapped, kek.Wrap(std::string(32, 'x')));
  ASSERT_OK_AND_ASSIGN(const std::string unwrapped, kek.Unwrap(wrapped));
  EXPECT_EQ(unwrapped, std::string(32, 'x'));
  ::close(leaked);

  std::vector<std::thread> threads;
  std::vector<std::string> got(8);
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<std::string> key = kek.Unwrap(wrapped);
      got[i] = key.ok() ? *key : std::string(key.status().message());
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& key : got) EXPECT_EQ(key, std::string(32, 'x'));
}

TEST_F(KekCommandTest, AFailingCommandIsUnavailableNamingItsExitStatusAndStderrNotItsOutput) {
  MakeKey("rsa");
  const KeyEncryptionKey kek =
      Hooked("rsa",
             "cat > /dev/null; echo c2VjcmV0LWtleQ==; echo 'hsm: slot 0 is locked' >&2; "
             "echo 'second line' >&2; exit 3");
  ASSERT_OK_AND_ASSIGN(const std::string wrapped, kek.Wrap(std::string(32, 'x')));
  const absl::Status s = kek.Unwrap(wrapped).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnavailable,
                          HasSubstr(absl::StrCat("key-management hook for key ", kek.key_id(),
                                                 ": the command exited with status 3: hsm: "
                                                 "slot 0 is locked"))));
  EXPECT_THAT(s.message(), Not(HasSubstr("c2VjcmV0")));
  EXPECT_THAT(s.message(), Not(HasSubstr("second line")));

  EXPECT_THAT(Hooked("rsa", "/nonexistent/hsm-tool").Unwrap(wrapped).status(),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("exited with status 127: /bin/sh: 1: /nonexistent/hsm-tool: not "
                                 "found")));
  EXPECT_THAT(Hooked("rsa", "kill -9 $$").Unwrap(wrapped).status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("killed by signal 9")));
  EXPECT_THAT(Hooked("rsa", "exit 1").Unwrap(wrapped).status(),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("exited with status 1 (nothing on stderr)")));
}

TEST_F(KekCommandTest, OutputThatIsNotOneLineOfBase64IsDataLoss) {
  MakeKey("sm2");
  const KeyEncryptionKey pub = *KeyEncryptionKey::LoadPublicKeyFile(Path("sm2.pub.pem"));
  ASSERT_OK_AND_ASSIGN(const std::string wrapped, pub.Wrap(std::string(32, 'x')));
  const auto unwrap = [&](const std::string& command) {
    return Hooked("sm2", command).Unwrap(wrapped).status();
  };
  EXPECT_THAT(unwrap("echo 'this is not base64!'"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not base64")));
  EXPECT_THAT(unwrap("echo 'QUFB=A'"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not base64")));
  EXPECT_THAT(unwrap("printf 'QUFB\\nQUFB\\n'"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("more than one line")));
  EXPECT_THAT(unwrap("true"), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no data key")));
  // A pipeline's exit status is its last step's: a decrypting step that failed shows as no
  // output, with what it said.
  EXPECT_THAT(unwrap("base64 -d | { cat > /dev/null; echo 'hsm: decryption failed' >&2; exit 1; "
                     "} | base64 -w0"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("printed no data key on stdout (0 bytes) (stderr: hsm: "
                                 "decryption failed)")));
  EXPECT_THAT(unwrap("head -c 100000 /dev/zero | tr '\\0' A"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("more than 4096 bytes")));
  // What it printed is never quoted.
  EXPECT_THAT(unwrap("echo 'QUFB QUFB'"),
              StatusIs(absl::StatusCode::kDataLoss, Not(HasSubstr("QUFB"))));
  // A final newline and surrounding blanks are fine; unpadded base64 too.
  EXPECT_EQ(*Hooked("sm2", "echo '  QUFBQQ==  '").Unwrap(wrapped), "AAAA");
  EXPECT_EQ(*Hooked("sm2", "printf 'QUFBQQ\\r\\n'").Unwrap(wrapped), "AAAA");
}

TEST_F(KekCommandTest, ACommandThatHangsIsKilledWithItsChildrenAtTheTimeout) {
  MakeKey("sm2");
  const KeyEncryptionKey pub = *KeyEncryptionKey::LoadPublicKeyFile(Path("sm2.pub.pem"));
  ASSERT_OK_AND_ASSIGN(const std::string wrapped, pub.Wrap(std::string(32, 'x')));
  const KeyEncryptionKey kek =
      Hooked("sm2",
             absl::StrCat("echo 'waiting for the HSM' >&2; sleep 60 & echo $! > '",
                          Path("child.pid"), "'; wait"),
             kOneSecond);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(kek.Unwrap(wrapped).status(),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       HasSubstr("did not finish within 1 s; it was killed (stderr: waiting for "
                                 "the HSM)")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // The command's own child went with it (gone, or a zombie until its new parent reaps it).
  const std::string pid =
      ReadFile(Path("child.pid")).substr(0, ReadFile(Path("child.pid")).find('\n'));
  ASSERT_FALSE(pid.empty());
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    const std::string stat = ReadFile("/proc/" + pid + "/stat");
    gone = stat.empty() || stat.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "sleep " << pid << " still runs";

  // One that closes its output and keeps running is killed too.
  EXPECT_THAT(Hooked("sm2", "exec >&- 2>&-; sleep 60", kOneSecond).Unwrap(wrapped).status(),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("within 1 s")));
}

TEST_F(KekCommandTest, OpensAndRewrapsSegmentKeysAndCatchesAKeyOfTheWrongLength) {
  MakeKey("sm2");
  MakeKey("rsa");
  const KeyEncryptionKey sm2_public = *KeyEncryptionKey::LoadPublicKeyFile(Path("sm2.pub.pem"));
  const KeyEncryptionKey rsa_public = *KeyEncryptionKey::LoadPublicKeyFile(Path("rsa.pub.pem"));
  const KeyEncryptionKey rsa_private = *KeyEncryptionKey::LoadPrivateKeyFile(Path("rsa.pem"));
  const KeyEncryptionKey sm2_hooked = Hooked("sm2", DecryptCommand("sm2"));
  for (CipherSuite suite : {CipherSuite::kAes256Gcm, CipherSuite::kSm4CtrHmacSm3}) {
    SCOPED_TRACE(CipherSuiteName(suite));
    ASSERT_OK_AND_ASSIGN(SealedSegmentKey segment, NewSegmentKey(suite, sm2_public));
    ASSERT_OK_AND_ASSIGN(const std::string field, segment.cipher.Seal("Ivan Petrov", "r1/name"));
    ASSERT_OK_AND_ASSIGN(const FieldCipher reader, OpenSegmentKey(segment.wrapped, sm2_hooked));
    EXPECT_EQ(*reader.Open(field, "r1/name"), "Ivan Petrov");
    // Rotation from the hooked key to another.
    ASSERT_OK_AND_ASSIGN(const WrappedDataKey rotated,
                         RewrapSegmentKey(segment.wrapped, sm2_hooked, rsa_public));
    EXPECT_EQ(rotated.kek_id, rsa_public.key_id());
    ASSERT_OK_AND_ASSIGN(const FieldCipher rotated_reader, OpenSegmentKey(rotated, rsa_private));
    EXPECT_EQ(*rotated_reader.Open(field, "r1/name"), "Ivan Petrov");
    // Still the key ids that decide: the hooked key does not open what another key wrapped.
    EXPECT_THAT(OpenSegmentKey(rotated, sm2_hooked).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition));

    // A hook that answers 4 bytes: caught before a cipher is made or a key re-wrapped.
    const KeyEncryptionKey short_answer = Hooked("sm2", "cat > /dev/null; echo QUFBQQ==");
    const std::string want = absl::StrCat("to 4 bytes; a ", ToAbsl(CipherSuiteName(suite)),
                                          " data key is ", DataKeyBytes(suite), " bytes");
    EXPECT_THAT(OpenSegmentKey(segment.wrapped, short_answer).status(),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(want)));
    EXPECT_THAT(RewrapSegmentKey(segment.wrapped, short_answer, rsa_public).status(),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(want)));
    // Errors of the hook come through with their code.
    EXPECT_THAT(OpenSegmentKey(segment.wrapped, Hooked("sm2", "exit 4")).status(),
                StatusIs(absl::StatusCode::kUnavailable, HasSubstr("status 4")));
  }
}

TEST_F(KekCommandTest, AnyHookWorksAndItsErrorsKeepTheirCode) {
  MakeKey("sm2");
  const KeyEncryptionKey private_key = *KeyEncryptionKey::LoadPrivateKeyFile(Path("sm2.pem"));
  KeyEncryptionKey pub = *KeyEncryptionKey::LoadPublicKeyFile(Path("sm2.pub.pem"));
  EXPECT_FALSE(pub.can_unwrap());
  const std::string id = pub.key_id();
  int calls = 0;
  const KeyEncryptionKey hooked = KeyEncryptionKey::WithUnwrapHook(
      std::move(pub), [&](std::string_view wrapped) -> absl::StatusOr<std::string> {
        ++calls;
        if (wrapped == "refuse") return absl::PermissionDeniedError("operator approval denied");
        return private_key.Unwrap(wrapped);
      });
  EXPECT_TRUE(hooked.can_unwrap());
  ASSERT_OK_AND_ASSIGN(const std::string wrapped, hooked.Wrap("data key"));
  EXPECT_EQ(*hooked.Unwrap(wrapped), "data key");
  EXPECT_THAT(hooked.Unwrap("refuse").status(),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr(absl::StrCat("key-management hook for key ", id,
                                              ": operator approval denied"))));
  EXPECT_EQ(calls, 2);
  // Without a hook, a public key stays one.
  const KeyEncryptionKey unhooked = KeyEncryptionKey::WithUnwrapHook(
      *KeyEncryptionKey::LoadPublicKeyFile(Path("sm2.pub.pem")), nullptr);
  EXPECT_FALSE(unhooked.can_unwrap());
  EXPECT_THAT(unhooked.Unwrap(wrapped).status(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(KekCommandTest, RefusesAnEmptyCommandAPrivateKeyFileAndNoTimeout) {
  MakeKey("sm2");
  EXPECT_THAT(KeyEncryptionKeyWithCommand(Path("sm2.pub.pem"), "  ").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("command is empty")));
  EXPECT_THAT(KeyEncryptionKeyWithCommand(Path("sm2.pem"), "true").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("-pubout")));
  EXPECT_THAT(KeyEncryptionKeyWithCommand(Path("missing.pem"), "true").status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.pem")));
  EXPECT_THAT(KeyEncryptionKeyWithCommand(Path("sm2.pub.pem"), "true",
                                          {.timeout = std::chrono::milliseconds(0)})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("timeout")));
}

}  // namespace
}  // namespace vigil::crypto
