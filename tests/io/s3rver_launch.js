// Starts the S3 test server (npm @20minutes/s3rver) on 127.0.0.1 with a random port and
// prints "PORT <n>". Usage: node s3rver_launch.js PACKAGE_DIR DATA_DIR [BUCKET...]
// s3rver verifies SigV4 signatures against its built-in key pair S3RVER / S3RVER.
// The published package has no bin script, hence this launcher.
'use strict';
const [pkg, dir, ...buckets] = process.argv.slice(2);
const S3rver = require(pkg);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory: dir,
  silent: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
server.run().then(
  (addr) => console.log('PORT ' + addr.port),
  (err) => {
    console.error(String(err));
    process.exit(1);
  },
);
// Stop with the parent: the test closes stdin or kills us.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
