/* SPDX-License-Identifier: MIT */
/*
 * mpi.h - the MPI interface of topocoll's MPI layer (tcmpi), for programs
 * built with tcmpicc and run with tcmpirun (docs/mpi-programs.md).
 *
 * Every C function of MPI 4.1 is declared (mpi_functions.def); those
 * the layer does not implement return MPI_ERR_UNSUPPORTED_OPERATION and
 * name themselves in the message of the error handler.  Handles are ints
 * (as MPICH's), private to each rank: every rank runs its own copy of the
 * program and of this layer.  Installed as <prefix>/include/topocoll/tcmpi/
 * mpi.h; tcmpicc puts that folder on the include path.
 */
#ifndef TCMPI_MPI_H
#define TCMPI_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 4
#define MPI_SUBVERSION 1
#define TCMPI 1

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Group;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Message;
typedef int MPI_Session;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
	int MPI_SOURCE;
	int MPI_TAG;
	int MPI_ERROR;
	int tcmpi_cancelled;
	MPI_Count tcmpi_count; /* bytes received */
} MPI_Status;

typedef struct MPI_F08_status {
	MPI_Fint MPI_SOURCE;
	MPI_Fint MPI_TAG;
	MPI_Fint MPI_ERROR;
	MPI_Fint tcmpi_internal[3];
} MPI_F08_status;

/* Handles of the tools interface (never valid here). */
typedef struct tcmpi_t_enum *MPI_T_enum;
typedef struct tcmpi_t_cvar *MPI_T_cvar_handle;
typedef struct tcmpi_t_pvar *MPI_T_pvar_handle;
typedef struct tcmpi_t_pvar_session *MPI_T_pvar_session;
typedef struct tcmpi_t_event_instance *MPI_T_event_instance;
typedef struct tcmpi_t_event_registration *MPI_T_event_registration;
typedef enum {
	MPI_T_CB_REQUIRE_NONE,
	MPI_T_CB_REQUIRE_MPI_RESTRICTED,
	MPI_T_CB_REQUIRE_THREAD_SAFE,
	MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE
} MPI_T_cb_safety;
typedef enum { MPI_T_SOURCE_ORDERED, MPI_T_SOURCE_UNORDERED } MPI_T_source_order;

/* Callbacks. */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_User_function_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype);
typedef int MPI_Comm_copy_attr_function(MPI_Comm, int, void *, void *, void *, int *);
typedef int MPI_Comm_delete_attr_function(MPI_Comm, int, void *, void *);
typedef int MPI_Type_copy_attr_function(MPI_Datatype, int, void *, void *, void *, int *);
typedef int MPI_Type_delete_attr_function(MPI_Datatype, int, void *, void *);
typedef int MPI_Win_copy_attr_function(MPI_Win, int, void *, void *, void *, int *);
typedef int MPI_Win_delete_attr_function(MPI_Win, int, void *, void *);
typedef int MPI_Copy_function(MPI_Comm, int, void *, void *, void *, int *);
typedef int MPI_Delete_function(MPI_Comm, int, void *, void *);
typedef void MPI_Comm_errhandler_function(MPI_Comm *, int *, ...);
typedef void MPI_Win_errhandler_function(MPI_Win *, int *, ...);
typedef void MPI_File_errhandler_function(MPI_File *, int *, ...);
typedef void MPI_Session_errhandler_function(MPI_Session *, int *, ...);
typedef int MPI_Grequest_query_function(void *, MPI_Status *);
typedef int MPI_Grequest_free_function(void *);
typedef int MPI_Grequest_cancel_function(void *, int);
typedef int MPI_Datarep_extent_function(MPI_Datatype, MPI_Aint *, void *);
typedef int MPI_Datarep_conversion_function(void *, MPI_Datatype, int, void *, MPI_Offset, void *);
typedef int MPI_Datarep_conversion_function_c(void *, MPI_Datatype, MPI_Count, void *, MPI_Offset,
                                              void *);
typedef void MPI_T_event_cb_function(MPI_T_event_instance, MPI_T_event_registration,
                                     MPI_T_cb_safety, void *);
typedef void MPI_T_event_free_cb_function(MPI_T_event_registration, MPI_T_cb_safety, void *);
typedef void MPI_T_event_dropped_cb_function(MPI_Count, MPI_T_event_registration, int,
                                             MPI_T_cb_safety, void *);

/* Error classes. */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_ASSERT 22
#define MPI_ERR_BAD_FILE 23
#define MPI_ERR_BASE 24
#define MPI_ERR_CONVERSION 25
#define MPI_ERR_DISP 26
#define MPI_ERR_DUP_DATAREP 27
#define MPI_ERR_FILE_EXISTS 28
#define MPI_ERR_FILE_IN_USE 29
#define MPI_ERR_FILE 30
#define MPI_ERR_INFO_KEY 31
#define MPI_ERR_INFO_NOKEY 32
#define MPI_ERR_INFO_VALUE 33
#define MPI_ERR_INFO 34
#define MPI_ERR_IO 35
#define MPI_ERR_KEYVAL 36
#define MPI_ERR_LOCKTYPE 37
#define MPI_ERR_NAME 38
#define MPI_ERR_NO_MEM 39
#define MPI_ERR_NOT_SAME 40
#define MPI_ERR_NO_SPACE 41
#define MPI_ERR_NO_SUCH_FILE 42
#define MPI_ERR_PORT 43
#define MPI_ERR_QUOTA 44
#define MPI_ERR_READ_ONLY 45
#define MPI_ERR_RMA_CONFLICT 46
#define MPI_ERR_RMA_SYNC 47
#define MPI_ERR_SERVICE 48
#define MPI_ERR_SIZE 49
#define MPI_ERR_SPAWN 50
#define MPI_ERR_UNSUPPORTED_DATAREP 51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_ERR_SESSION 58
#define MPI_ERR_PROC_ABORTED 59
#define MPI_ERR_VALUE_TOO_LARGE 60
#define MPI_ERR_ERRHANDLER 61
#define MPI_T_ERR_INVALID 62
#define MPI_ERR_LASTCODE 63

/* Null handles and predefined objects. */
#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_COMM_WORLD ((MPI_Comm)1)
#define MPI_COMM_SELF ((MPI_Comm)2)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_GROUP_EMPTY ((MPI_Group)1)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)1)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)2)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)3)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_INFO_ENV ((MPI_Info)1)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_FILE_NULL ((MPI_File)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)1)
#define MPI_SESSION_NULL ((MPI_Session)0)

/* Datatypes: the predefined ones are 1 .. TCMPI_DT_PREDEFINED - 1 (order:
 * tools/tcmpi/dtype.c's table). */
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_CHAR ((MPI_Datatype)1)
#define MPI_SIGNED_CHAR ((MPI_Datatype)2)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)3)
#define MPI_BYTE ((MPI_Datatype)4)
#define MPI_SHORT ((MPI_Datatype)5)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)6)
#define MPI_INT ((MPI_Datatype)7)
#define MPI_UNSIGNED ((MPI_Datatype)8)
#define MPI_LONG ((MPI_Datatype)9)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)10)
#define MPI_LONG_LONG_INT ((MPI_Datatype)11)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)12)
#define MPI_FLOAT ((MPI_Datatype)13)
#define MPI_DOUBLE ((MPI_Datatype)14)
#define MPI_LONG_DOUBLE ((MPI_Datatype)15)
#define MPI_WCHAR ((MPI_Datatype)16)
#define MPI_C_BOOL ((MPI_Datatype)17)
#define MPI_INT8_T ((MPI_Datatype)18)
#define MPI_INT16_T ((MPI_Datatype)19)
#define MPI_INT32_T ((MPI_Datatype)20)
#define MPI_INT64_T ((MPI_Datatype)21)
#define MPI_UINT8_T ((MPI_Datatype)22)
#define MPI_UINT16_T ((MPI_Datatype)23)
#define MPI_UINT32_T ((MPI_Datatype)24)
#define MPI_UINT64_T ((MPI_Datatype)25)
#define MPI_AINT ((MPI_Datatype)26)
#define MPI_OFFSET ((MPI_Datatype)27)
#define MPI_COUNT ((MPI_Datatype)28)
#define MPI_PACKED ((MPI_Datatype)29)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)30)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)31)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)32)
#define MPI_FLOAT_INT ((MPI_Datatype)33)
#define MPI_DOUBLE_INT ((MPI_Datatype)34)
#define MPI_LONG_INT ((MPI_Datatype)35)
#define MPI_2INT ((MPI_Datatype)36)
#define MPI_SHORT_INT ((MPI_Datatype)37)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)38)
#define TCMPI_DT_PREDEFINED 39

/* Operators: the predefined ones are 1 .. TCMPI_OP_PREDEFINED - 1. */
#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_MAX ((MPI_Op)1)
#define MPI_MIN ((MPI_Op)2)
#define MPI_SUM ((MPI_Op)3)
#define MPI_PROD ((MPI_Op)4)
#define MPI_LAND ((MPI_Op)5)
#define MPI_BAND ((MPI_Op)6)
#define MPI_LOR ((MPI_Op)7)
#define MPI_BOR ((MPI_Op)8)
#define MPI_LXOR ((MPI_Op)9)
#define MPI_BXOR ((MPI_Op)10)
#define MPI_MINLOC ((MPI_Op)11)
#define MPI_MAXLOC ((MPI_Op)12)
#define MPI_REPLACE ((MPI_Op)13)
#define MPI_NO_OP ((MPI_Op)14)
#define TCMPI_OP_PREDEFINED 15

/* Special values. */
#define MPI_BOTTOM ((void *)0)
#define MPI_IN_PLACE ((void *)-1)
#define MPI_STATUS_IGNORE ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)
#define MPI_F_STATUS_IGNORE ((MPI_Fint *)1)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint *)1)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
/* The weights' sentinels are the addresses of objects of the layer: a
 * compiler that sees a constant such as (int *)2 passed for an array of
 * weights warns of reading an array of no elements. */
extern int tcmpi_unweighted[1], tcmpi_weights_empty[1];
#define MPI_UNWEIGHTED (tcmpi_unweighted)
#define MPI_WEIGHTS_EMPTY (tcmpi_weights_empty)
#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
/* A buffered message's header and alignment in the attached buffer
 * (tools/tcmpi/shim_sendmodes.c). */
#define MPI_BSEND_OVERHEAD 320
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 256
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_PSET_NAME_LEN 256
#define MPI_MAX_STRINGTAG_LEN 256

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* Attribute keys of communicators (MPI_Comm_get_attr). */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_LASTUSEDCODE 6
#define MPI_APPNUM 7

#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR 5
#define MPI_COMBINER_INDEXED 6
#define MPI_COMBINER_HINDEXED 7
#define MPI_COMBINER_INDEXED_BLOCK 8
#define MPI_COMBINER_HINDEXED_BLOCK 9
#define MPI_COMBINER_STRUCT 10
#define MPI_COMBINER_SUBARRAY 11
#define MPI_COMBINER_DARRAY 12
#define MPI_COMBINER_F90_REAL 13
#define MPI_COMBINER_F90_COMPLEX 14
#define MPI_COMBINER_F90_INTEGER 15
#define MPI_COMBINER_RESIZED 16
#define MPI_COMBINER_VALUE_INDEX 17

#define MPI_ORDER_C 0
#define MPI_ORDER_FORTRAN 1
#define MPI_DISTRIBUTE_BLOCK 0
#define MPI_DISTRIBUTE_CYCLIC 1
#define MPI_DISTRIBUTE_NONE 2
#define MPI_DISTRIBUTE_DFLT_DARG (-1)
#define MPI_TYPECLASS_INTEGER 1
#define MPI_TYPECLASS_REAL 2
#define MPI_TYPECLASS_COMPLEX 3
#define MPI_COMM_TYPE_SHARED 1
#define MPI_COMM_TYPE_HW_GUIDED 2
#define MPI_COMM_TYPE_HW_UNGUIDED 3
#define MPI_COMM_TYPE_RESOURCE_GUIDED 4
#define MPI_MODE_NOCHECK 1
#define MPI_MODE_NOSTORE 2
#define MPI_MODE_NOPUT 4
#define MPI_MODE_NOPRECEDE 8
#define MPI_MODE_NOSUCCEED 16
#define MPI_MODE_RDONLY 2
#define MPI_MODE_RDWR 8
#define MPI_MODE_WRONLY 4
#define MPI_MODE_CREATE 1
#define MPI_MODE_EXCL 64
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED 2
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT (-54278278)

#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
#define MPI_CONVERSION_FN_NULL_C ((MPI_Datarep_conversion_function_c *)0)
/* The copy callback that gives the duplicate the same value (a function
 * of the layer's). */
int tcmpi_comm_dup_fn(MPI_Comm, int, void *, void *, void *, int *);
#define MPI_COMM_DUP_FN (tcmpi_comm_dup_fn)
#define MPI_DUP_FN (tcmpi_comm_dup_fn)

/* Every MPI 4.1 C function. */
#define TCMPI_FN(ret, name, params) ret name params;
#include "mpi_functions.def"
#undef TCMPI_FN

/* topocoll's extensions (not MPI; a program tests `#ifdef TCMPI`).
 * TCMPI_Compute_ns charges ns nanoseconds of computation to the calling
 * rank's logical clock (tc_clock_advance): the modelled time counts the
 * computation as a tc_* program's does, and an emulated run waits it out.
 * A negative or non-finite ns fails with MPI_ERR_ARG.  TCMPI_Clock_ns is
 * the calling rank's logical clock (tc_clock) in nanoseconds, 0 at the
 * start of the run: the largest over the ranks at the end of a program
 * part is that part's modelled time when the ranks started it together. */
int TCMPI_Compute_ns(double ns);
double TCMPI_Clock_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* TCMPI_MPI_H */
