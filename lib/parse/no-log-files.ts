// Parse Server creates a file logger when its package is first loaded (before
// any option can be passed), writing ./logs/ in the working directory. The kit
// logs to the console only; this runs before every import of parse-server.
// An application that wants Parse's log files sets PARSE_SERVER_LOGS_FOLDER.
if (process.env.PARSE_SERVER_LOGS_FOLDER === undefined) process.env.PARSE_SERVER_LOGS_FOLDER = 'null'
export {}
