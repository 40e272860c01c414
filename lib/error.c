/* error.c - words for every code libkmsg returns. */
#include <kmsg/kmsg.h>

#include <string.h>

const char *kmsg_strerror(int code)
{
	switch (code) {
	case 0:              return "success";
	case KMSG_ENOTLOG:   return "not a kmsg log file";
	case KMSG_EVERSION:  return "log format version or feature not supported by this kmsg";
	case KMSG_ECORRUPT:  return "log header is damaged or inconsistent with the file";
	case KMSG_ETOOLONG:  return "message longer than the log's maximum record size";
	case KMSG_EFIELD:    return "invalid field: keys are 1-64 characters of A-Z, 0-9 and _, starting with a letter, and all fields together at most 4096 bytes";
	case KMSG_EPRIO:     return "facility or level out of range";
	case KMSG_EBUSY:     return "no room: writers stopped in the middle of an append (Ctrl-Z, a debugger) hold the log's room; let them go on (fg, kill -CONT) or end them, then append again";
	case KMSG_ERDONLY:   return "log opened read-only";
	case KMSG_ESEQ:      return "sequence number space of the log exhausted";
	case KMSG_ESIZE:     return "log size out of range (8 KiB to 64 TiB, with room for at least two records of the maximum size)";
	case KMSG_EINVAL:    return "invalid argument";
	case KMSG_ECHANGED:  return "the log file changed under the reader (written over with another log, or restored to its size after it was cut short): open it again";
	case KMSG_ETOOBIG:   return "log larger than this build of kmsg can map (a 32-bit build maps less than 4 GiB): read it with a 64-bit kmsg, or make the log smaller";
	case KMSG_EOTHERLOG: return "the position is of another log (its ring id differs)";
	case KMSG_EEMPTY:    return "the file is empty: a log not yet made, or one emptied in place (as logrotate's copytruncate does)";
	case KMSG_ESHORTHDR: return "the file ends inside a log's header: a log cut short before its first record";
	case KMSG_ESHAREDFS: return "the log is on a network or FUSE file system, where writers on other machines would each map their own copy and overwrite each other's records";
	case KMSG_EOLDWRITER: return "the log is in an older format that an older kmsg has open for writing; it is upgraded once that writer has closed it (reading works meanwhile)";
	}
	if (code < 0 && code > -4096)
		return strerror(-code);
	return "unknown error";
}
