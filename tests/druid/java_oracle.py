"""Compiles the Druid-side Java oracles of tests/druid/oracle/ for the tests that run them.

Several of those tests run at once under `ctest -j`: compiling into one shared folder let one
test's javac rewrite a class file while another test's JVM was loading it. Each set of
sources is compiled once into a folder named by the hash of its sources and class path,
published by an atomic rename, so a JVM only ever sees complete class files.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile

ORACLE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle")


def compile_oracle(build_dir, names, classpath=()):
    """Compiles tests/druid/oracle/NAME.java for each NAME; returns the class folder."""
    sources = [os.path.join(ORACLE_DIR, n + ".java") for n in names]
    h = hashlib.sha256(":".join(classpath).encode())
    for s in sources:
        with open(s, "rb") as f:
            h.update(f.read())
    root = os.path.join(os.path.abspath(build_dir), "tests", "oracle-classes")
    out = os.path.join(root, h.hexdigest()[:16])
    if os.path.isdir(out):
        return out
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".javac-", dir=root)
    cmd = ["javac", "-nowarn", "-d", tmp]
    if classpath:
        cmd += ["-cp", ":".join(classpath)]
    try:
        subprocess.run(cmd + sources, check=True)
        os.rename(tmp, out)
    except OSError:  # another test published the same classes first
        if not os.path.isdir(out):
            raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp)
    return out
