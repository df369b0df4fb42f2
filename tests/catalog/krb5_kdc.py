"""A throw-away MIT Kerberos KDC for tests (Debian krb5-kdc, krb5-admin-server's
kdb5_util/kadmin.local, krb5-user's kinit): realm ICD.TEST on 127.0.0.1 with a random port
(TCP), its database, config and keytabs in a temp dir, started as `krb5kdc -n` and
stopped by stop().

start(dir) returns a Kdc with .env (KRB5_CONFIG, KRB5_KDC_PROFILE for child processes; also
put into os.environ so in-process GSS-API uses the realm), .keytab(name) and the
principals: hive/localhost (the metastore; keytab hive.keytab), druid (the client;
druid.keytab, and stale.keytab holding druid's previous key: a wrong keytab).
missing() names the programs that are not installed.
"""
import os
import shutil
import socket
import subprocess
import time

REALM = "ICD.TEST"
PROGRAMS = ["krb5kdc", "kdb5_util", "kadmin.local", "kinit"]


def _which(p):
    return shutil.which(p) or next((os.path.join(d, p) for d in ("/usr/sbin", "/sbin")
                                    if os.path.exists(os.path.join(d, p))), None)


def missing():
    return [p for p in PROGRAMS if not _which(p)]


class Kdc:
    def __init__(self, d):
        self.dir = d
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        conf = os.path.join(d, "krb5.conf")
        kdcconf = os.path.join(d, "kdc.conf")
        with open(conf, "w") as f:
            f.write(f"""[libdefaults]
  default_realm = {REALM}
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  udp_preference_limit = 1
  clockskew = 1
  default_ccache_name = FILE:{d}/default.ccache
[realms]
  {REALM} = {{
    kdc = 127.0.0.1:{self.port}
  }}
[domain_realm]
  localhost = {REALM}
""")
        with open(kdcconf, "w") as f:
            f.write(f"""[kdcdefaults]
  kdc_listen = 127.0.0.1:{self.port}
  kdc_tcp_listen = 127.0.0.1:{self.port}
[realms]
  {REALM} = {{
    database_name = {d}/principal
    key_stash_file = {d}/stash
    acl_file = {d}/kadm5.acl
    max_life = 1h
    max_renewable_life = 0
  }}
[logging]
  kdc = FILE:{d}/kdc.log
""")
        with open(os.path.join(d, "kadm5.acl"), "w") as f:
            f.write("")
        self.env = {"KRB5_CONFIG": conf, "KRB5_KDC_PROFILE": kdcconf}
        os.environ.update(self.env)
        self.proc = None

    def _run(self, *args):
        return subprocess.run([_which(args[0])] + list(args[1:]), env=dict(os.environ),
                              capture_output=True, text=True, timeout=60, check=True)

    def kadmin(self, q):
        return self._run("kadmin.local", "-r", REALM, "-q", q)

    def keytab(self, name):
        return os.path.join(self.dir, name + ".keytab")

    def setup(self):
        self._run("kdb5_util", "-r", REALM, "create", "-s", "-P", "throwaway-master-pw")
        self.kadmin(f"addprinc -randkey hive/localhost@{REALM}")
        self.kadmin(f"ktadd -k {self.keytab('hive')} hive/localhost@{REALM}")
        self.kadmin(f"addprinc -randkey druid@{REALM}")
        self.kadmin(f"ktadd -k {self.keytab('stale')} druid@{REALM}")
        self.kadmin(f"ktadd -k {self.keytab('druid')} druid@{REALM}")  # new key: stale is wrong
        self.proc = subprocess.Popen([_which("krb5kdc"), "-n", "-r", REALM], env=dict(os.environ),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("krb5kdc exited: " + self.proc.stderr.read().decode())
                time.sleep(0.05)
        raise RuntimeError("krb5kdc does not listen")

    def kinit(self, ccache, lifetime):
        self._run("kinit", "-k", "-t", self.keytab("druid"), "-l", lifetime, "-c", ccache,
                  f"druid@{REALM}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def start(d):
    k = Kdc(d)
    k.setup()
    return k
