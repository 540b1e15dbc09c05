// TestPki: certificate authorities and certificates made at test time with the openssl command
// line (TESTONLY), for the TLS and mutual-TLS tests. Nothing is checked in: every key and
// certificate is new in each run, so no test depends on a date that passes.
//
//   TestPki pki(dir);                       // makes "ca" (the trusted CA)
//   ASSERT_TRUE(pki.ok()) << pki.error();
//   TestCertificate server = pki.Issue("ca", "server", "localhost");   // SAN localhost, 127.0.0.1
//   TestCertificate client = pki.Issue("ca", "payments-gw");
//   pki.AddCa("other-ca");                  // an untrusted CA
//   TestCertificate stranger = pki.Issue("other-ca", "stranger");
//   TestCertificate expired = pki.Issue("ca", "late", "", /*expired=*/true);
//
// Keys are EC P-256, written with mode 0600 (the server refuses key files others may read).
// Certificates carry a subject "CN=<name>,O=vigil tests"; server certificates (a non-empty
// dns name) carry subjectAltName DNS:<dns>, IP:127.0.0.1 and serverAuth; client certificates
// carry clientAuth. An expired certificate's notAfter is one day before its notBefore.
#ifndef VIGIL_TESTING_TESTING_PKI_H_
#define VIGIL_TESTING_TESTING_PKI_H_

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <string>
#include <vector>

namespace vigil::testing {

struct TestCertificate {
  std::string cert;     // PEM file
  std::string key;      // PEM file, mode 0600
  std::string subject;  // RFC 2253, as OpenSSL prints it: "CN=name,O=vigil tests"
};

class TestPki {
 public:
  // Makes the directory and the trusted CA "ca" in it.
  explicit TestPki(std::string dir) : dir_(std::move(dir)) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) error_ += "create " + dir_ + ": " + ec.message() + "\n";
    AddCa("ca");
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }

  // The CA certificate file of "ca_name".
  std::string CaCert(const std::string& ca_name = "ca") const { return Path(ca_name + ".pem"); }

  // A self-signed CA certificate and key: <dir>/<name>.pem, <dir>/<name>.key.
  void AddCa(const std::string& name) {
    Run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2"
        " -keyout '" + Path(name + ".key") + "' -out '" + Path(name + ".pem") +
        "' -subj '/O=vigil tests/CN=" + name + "' -addext basicConstraints=critical,CA:TRUE"
        " -addext keyUsage=critical,keyCertSign,cRLSign");
    ::chmod(Path(name + ".key").c_str(), 0600);
  }

  // A certificate for "name" signed by "ca_name". With "dns" it is a server certificate.
  TestCertificate Issue(const std::string& ca_name, const std::string& name,
                        const std::string& dns = "", bool expired = false) {
    TestCertificate c;
    c.cert = Path(name + ".pem");
    c.key = Path(name + ".key");
    c.subject = "CN=" + name + ",O=vigil tests";
    const std::string csr = Path(name + ".csr");
    const std::string ext = Path(name + ".ext");
    std::string extensions = "basicConstraints=critical,CA:FALSE\n"
                             "keyUsage=critical,digitalSignature,keyAgreement\n";
    if (dns.empty()) {
      extensions += "extendedKeyUsage=clientAuth\n";
    } else {
      extensions += "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:" + dns + ",IP:127.0.0.1\n";
    }
    Write(ext, extensions);
    Run("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '" + c.key +
        "' -out '" + csr + "' -subj '/O=vigil tests/CN=" + name + "'");
    ::chmod(c.key.c_str(), 0600);
    Run("openssl x509 -req -in '" + csr + "' -CA '" + CaCert(ca_name) + "' -CAkey '" +
        Path(ca_name + ".key") + "' -set_serial " + std::to_string(++serial_) + " -days " +
        (expired ? "-1" : "1") + " -extfile '" + ext + "' -out '" + c.cert + "'");
    return c;
  }

 private:
  std::string Path(const std::string& file) const { return dir_ + "/" + file; }

  void Write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) error_ += "cannot write " + path + "\n";
  }

  void Run(const std::string& command) {
    const std::string full = command + " >> '" + dir_ + "/openssl.log' 2>&1";
    if (std::system(full.c_str()) != 0) error_ += "failed: " + command + "\n";
  }

  std::string dir_;
  std::string error_;
  int serial_ = 1000;
};

}  // namespace vigil::testing

#endif  // VIGIL_TESTING_TESTING_PKI_H_
