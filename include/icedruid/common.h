/*
 * icedruid public API: the export macro and the conventions every public header follows.
 *
 *   - Functions return an int: 0 (ICD_OK) on success, a negative icd_code on failure, and
 *     fill the caller's icd_error (error.h). Results come back through the first argument.
 *   - Handles are opaque; each has an icd_*_free that accepts NULL.
 *   - Strings passed in are borrowed for the call unless a function says otherwise;
 *     strings returned point into the handle and live until it is freed.
 *   - The library never prints or exits: the caller prints errors itself (warnings go to
 *     the handler of icd_set_warn_handler, error.h). It reads no environment variable:
 *     settings are passed in (icd_storage_set_environment hands it an environment
 *     snapshot for the AWS credential chain).
 *
 * The headers are C99 and C++ clean; only the functions declared with ICD_EXTERN are
 * exported from the shared library.
 */
#ifndef ICEDRUID_COMMON_H
#define ICEDRUID_COMMON_H

#if defined(_WIN32)
#define ICD_EXTERN
#elif defined(__GNUC__) || defined(__clang__)
#define ICD_EXTERN __attribute__((visibility("default")))
#else
#define ICD_EXTERN
#endif

#endif
