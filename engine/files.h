/* The executor's endpoints other than execute_action, passed through the engine: file
 * transfers (recorded as actions of kind "upload", "download", "list_files" and published as
 * "action" events) and the /alive and /server_info probes (not recorded). docs/protocol.md
 * has the executor's side; docs/remote-runtime.md this one. */
#ifndef PADDOCK_FILES_H
#define PADDOCK_FILES_H

struct api_req;

/* Archives of GET .../download_files larger than this are refused (413). */
#define FILES_DOWNLOAD_MAX (1024ULL * 1024 * 1024)

/* POST /v1/sessions/{id}/upload_file?destination=&recursive=: the multipart body and its
 * Content-Type forwarded unchanged. */
void files_route_upload(struct api_req *r);
/* GET /v1/sessions/{id}/download_files?path=: the executor's zip, spooled to an unlinked file
 * under the state dir (at most FILES_DOWNLOAD_MAX), then sent with its length. */
void files_route_download(struct api_req *r);
/* POST /v1/sessions/{id}/list_files {"path"?}. */
void files_route_list(struct api_req *r);
/* GET /v1/sessions/{id}/alive: the executor's answer when the session is ready, else 503. */
void files_route_alive(struct api_req *r);
/* GET /v1/sessions/{id}/server_info. */
void files_route_server_info(struct api_req *r);

#endif
