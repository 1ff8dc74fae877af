;;; agentls.el --- agentls coding agent through eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (eglot "1.9"))
;; Keywords: tools, languages
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; agentls is a language server that runs a coding agent.  This file registers it with
;; eglot (built in since Emacs 29; the `eglot' package from ELPA before) and adds commands:
;;
;;   M-x agentls-run         task prompt; the active region is sent as the selection
;;   M-x agentls-ask         read-only question
;;   M-x agentls-fix         fix the flymake diagnostics on the current line (or region)
;;   M-x agentls-cancel      cancel the running run(s)
;;   M-x agentls-accept      apply a session's staged edits (C-u: this file only)
;;   M-x agentls-reject      discard a session's staged edits (C-u: this file only)
;;   M-x agentls-diff        the staged edits of the last session as a diff; in it,
;;                           A / R accept / reject the hunk at point (R asks why)
;;   M-x agentls-rewind      back to the end of an earlier turn (picked with its prompt
;;                           and files); applied changes since are staged in reverse
;;   M-x agentls-transcript  the live log (C-u: the last run's transcript file)
;;   M-x agentls-status      sessions, model, endpoint, index
;;
;; all under the prefix map `agentls-command-map' (bind it, e.g. to C-c a).
;;
;; Set-up:
;;   (require 'agentls)
;;   (agentls-setup)                     ; registers the server for `agentls-major-modes'
;;   (global-set-key (kbd "C-c a") agentls-command-map)
;;   M-x eglot in a project buffer
;;
;; eglot runs one server per major mode and project, so with agentls registered for a
;; mode it replaces that mode's usual server in eglot.  eglot does not implement change
;; annotations, so review-mode edits stay staged: review them with `agentls-diff', accept
;; or reject them with the commands above or the "Accept/Reject agentls changes" code
;; actions (M-x eglot-code-actions).  What became of a run's or an accept's edits is
;; shown in the echo area and, with [Show diff] [Accept staged] [Reject] buttons, in
;; the log buffer.  Approval prompts (window/showMessageRequest) are answered in the
;; minibuffer.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'eglot)
(require 'jsonrpc)
(require 'flymake)
(require 'diff)

(defgroup agentls nil
  "The agentls coding agent, through eglot."
  :group 'tools
  :prefix "agentls-")

(defcustom agentls-server-command '("agentls" "serve")
  "Command that starts the server.
For example (\"/path/to/.venv/bin/agentls\" \"serve\")."
  :type '(repeat string))

(defcustom agentls-major-modes '(python-mode python-ts-mode)
  "Major modes whose eglot server is agentls (eglot runs one server per mode)."
  :type '(repeat symbol))

(defcustom agentls-settings '(:mode "review")
  "The `agentls' settings section as a plist.
Keys as the server documents them: :model, :baseUrl, :mode (\"review\",
\"auto\" or \"plan\"), :maxTurns, :allowedTools, :askTools, :instructions.
Sent as initializationOptions and as the `agentls' section of workspace
configuration.  Never put the API key here: the server reads
ANTHROPIC_API_KEY from the environment."
  :type 'plist)

(defcustom agentls-save-edits t
  "Save the files an accepted agent edit changed.
eglot applies a server's edits to buffers and leaves saving to you (as for
`eglot-rename'); agentls's accepted edits are whole changes you already
reviewed, so by default each buffer they changed is saved, unless it had
unsaved changes of yours before the edit (then it stays modified, as eglot
leaves it).  nil: eglot's own behaviour, nothing is saved."
  :type 'boolean)

(defconst agentls-log-buffer "*agentls-log*"
  "Name of the live log buffer fed by agentls/event notifications.")

(defvar agentls-last-session nil
  "The id of the most recent agentls session started or seen.")

(defvar agentls--sessions (make-hash-table :test #'equal)
  "Session id -> plist (:status :running :transcript).")

;;;; Server registration

(defclass agentls-server (eglot-lsp-server) ()
  :documentation "An eglot server object for agentls.")

(cl-defmethod eglot-initialization-options ((_server agentls-server))
  "Send `agentls-settings' as initializationOptions."
  (or agentls-settings (make-hash-table)))

(cl-defmethod eglot-client-capabilities :around ((_server agentls-server))
  "eglot's capabilities plus the agentls flags.
This client shows run results itself, and sends the didChange of every
buffer an edit changed before it answers workspace/applyEdit."
  (let ((caps (cl-call-next-method)))
    (plist-put caps :experimental
               '(:agentls (:runResults t :syncBeforeApplyReply t)))))

(defun agentls--flush (server)
  "Send SERVER the didChange eglot holds back for its idle timer, in every buffer.
Without it the server works on stale text (and versions): an accept right after
typing is refused with \"Edits on ... require version N\"."
  (dolist (buffer (eglot--managed-buffers server))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (eglot--signal-textDocument/didChange)))))

(defun agentls--unmodified-file-buffers ()
  "File buffers without unsaved changes, before an edit is applied."
  (cl-remove-if-not (lambda (b) (and (buffer-file-name b) (not (buffer-modified-p b))))
                    (buffer-list)))

(defun agentls--save-edited (clean before)
  "Save the file buffers an edit modified that were in CLEAN or not in BEFORE.
CLEAN: buffers without unsaved changes before the edit; BEFORE: every buffer
then (a buffer the edit opened was not among them)."
  (when agentls-save-edits
    (dolist (buffer (buffer-list))
      (when (and (buffer-file-name buffer) (buffer-modified-p buffer)
                 (or (memq buffer clean) (not (memq buffer before))))
        (with-current-buffer buffer
          (let ((inhibit-message t))
            (save-buffer)))))))

(cl-defmethod eglot-handle-request
  ((server agentls-server) (_method (eql workspace/applyEdit)) &rest _args)
  "Apply the edit as eglot does, send its didChanges, then save what it changed.
The server confirms the edit from the buffers' versions and text at the answer;
saving follows `agentls-save-edits'."
  (let* ((before (buffer-list))
         (clean (agentls--unmodified-file-buffers))
         (answer (cl-call-next-method)))
    (agentls--flush server)
    (agentls--save-edited clean before)
    answer))

;;;###autoload
(defun agentls-setup ()
  "Register agentls with eglot for `agentls-major-modes'."
  (interactive)
  (let ((modes (if (cdr agentls-major-modes) agentls-major-modes (car agentls-major-modes))))
    (setq eglot-server-programs
          (cons (cons modes (cons 'agentls-server agentls-server-command))
                (cl-remove-if (lambda (entry) (equal (car entry) modes))
                              eglot-server-programs))))
  (setq-default eglot-workspace-configuration
                (agentls--merge-config (default-value 'eglot-workspace-configuration))))

(defun agentls--merge-config (config)
  "CONFIG (a plist of sections) with its `agentls' section from the settings."
  (if (functionp config)
      config                            ; a user function decides; leave it alone
    (let ((plist (copy-sequence config)))
      (plist-put plist :agentls agentls-settings))))

;;;; Talking to the server

(defun agentls--server ()
  "The eglot server of this buffer, or a clear error."
  (let ((server (eglot-current-server)))
    (unless (and server (cl-typep server 'agentls-server))
      (user-error "agentls: no agentls server here; run M-x agentls-setup, then M-x eglot"))
    server))

(defcustom agentls-request-timeout 600
  "Seconds to wait for a command's answer.
Runs answer at once, but the first command waits for the server to start,
and accepting edits waits while eglot asks you to confirm them."
  :type 'integer)

(defun agentls--execute (command args &optional on-result)
  "Send workspace/executeCommand COMMAND with the one argument object ARGS.
Pending buffer changes go first, so the server sees what you see.
Call ON-RESULT with the result when it arrives."
  (agentls--flush (agentls--server))
  (jsonrpc-async-request
   (agentls--server) :workspace/executeCommand
   `(:command ,command :arguments ,(vector (or args (make-hash-table))))
   :success-fn (lambda (result) (when on-result (funcall on-result result)))
   :error-fn (lambda (err)
               (message "agentls: %s failed: %s" command
                        (or (plist-get err :message) err)))
   :timeout agentls-request-timeout
   :timeout-fn (lambda () (message "agentls: %s timed out" command))))

(defun agentls--uri (path)
  "The file URI of PATH (eglot's public function where it has one)."
  (if (fboundp 'eglot-path-to-uri)
      (funcall 'eglot-path-to-uri path)
    (funcall 'eglot--path-to-uri path)))

(defun agentls--path (uri)
  "The file name of URI (eglot's public function where it has one)."
  (if (fboundp 'eglot-uri-to-path)
      (funcall 'eglot-uri-to-path uri)
    (funcall 'eglot--uri-to-path uri)))

(defun agentls--position (pos)
  "LSP position of buffer position POS, in the encoding eglot negotiated."
  (if (fboundp 'eglot--pos-to-lsp-position)
      (funcall 'eglot--pos-to-lsp-position pos)
    (save-excursion
      (goto-char pos)
      (list :line (1- (line-number-at-pos)) :character (- pos (line-beginning-position))))))

(defun agentls--context (&optional beg end)
  "The uri (and range BEG..END, or the active region) of the current buffer."
  (let ((args (list :uri (agentls--uri (buffer-file-name)))))
    (when (and (not beg) (use-region-p))
      (setq beg (region-beginning) end (region-end)))
    (when beg
      (setq args (append args (list :range (list :start (agentls--position beg)
                                                 :end (agentls--position end))))))
    args))

(defun agentls--started (kind)
  "A result handler that remembers the session of a run of KIND."
  (lambda (result)
    (when-let ((session (plist-get result :session)))
      (setq agentls-last-session session)
      (puthash session (list :status "starting" :running t) agentls--sessions)
      (message "agentls: %s started (session %s) - M-x agentls-cancel to stop" kind session))))

;;;; Commands

;;;###autoload
(defun agentls-run (prompt &optional mode)
  "Start an agentls run with PROMPT; MODE is \"review\", \"auto\" or \"plan\".
The current file and the active region are sent as context.  With a prefix
argument, edits are applied as they happen (mode \"auto\")."
  (interactive (list (read-string "agentls task: ") (and current-prefix-arg "auto")))
  (let ((args (append (list :prompt prompt) (agentls--context))))
    (when mode (setq args (append args (list :mode mode))))
    (agentls--execute "agentls.run" args (agentls--started "run"))))

;;;###autoload
(defun agentls-ask (prompt)
  "Ask agentls PROMPT (read-only); the region is sent as the selection."
  (interactive (list (read-string "agentls question: ")))
  (agentls--execute "agentls.ask" (append (list :prompt prompt) (agentls--context))
                    (agentls--started "question")))

(defun agentls--diagnostics (beg end)
  "Flymake diagnostics between BEG and END as prompt lines."
  (mapcar (lambda (d)
            (format "- line %d: %s" (line-number-at-pos (flymake-diagnostic-beg d))
                    (flymake-diagnostic-text d)))
          (flymake-diagnostics beg end)))

;;;###autoload
(defun agentls-fix ()
  "Fix the diagnostics on the current line (or in the region) with agentls."
  (interactive)
  (let* ((beg (if (use-region-p) (region-beginning) (line-beginning-position)))
         (end (if (use-region-p) (region-end) (line-end-position)))
         (found (agentls--diagnostics beg end)))
    (unless found (user-error "agentls: no diagnostics here"))
    (agentls--execute
     "agentls.run"
     (append (list :prompt (concat "Fix these diagnostics:\n" (string-join found "\n")))
             (agentls--context beg end))
     (agentls--started "fix"))))

;;;###autoload
(defun agentls-cancel (&optional session)
  "Cancel SESSION's run, or every run."
  (interactive)
  (agentls--execute "agentls.cancel" (if session (list :session session) (make-hash-table))
                    (lambda (result)
                      (let ((ids (append (plist-get result :cancelled) nil)))
                        (message "agentls: %s" (if ids (format "cancelling %s" ids)
                                                 "nothing to cancel"))))))

(defun agentls--edit-command (command this-file &optional session)
  "Run COMMAND (agentls.accept or agentls.reject) on SESSION or the last one.
With THIS-FILE, only the current buffer's file.  What was applied, left out
or discarded is reported from the server's edit_result event."
  (let ((session (or session agentls-last-session)))
    (unless session
      (user-error "agentls: no session yet; start one with M-x agentls-run"))
    (agentls--execute
     command
     (append (list :session session)
             (when this-file (list :uris (vector (agentls--uri (buffer-file-name)))))))))

;;;###autoload
(defun agentls-accept (&optional this-file)
  "Apply the last session's staged edits.
With a prefix argument (THIS-FILE), only those to the current file."
  (interactive "P")
  (agentls--edit-command "agentls.accept" this-file))

;;;###autoload
(defun agentls-reject (&optional this-file)
  "Discard the last session's staged edits.
With a prefix argument (THIS-FILE), only those to the current file."
  (interactive "P")
  (agentls--edit-command "agentls.reject" this-file))

;;;###autoload
(defun agentls-status ()
  "Show sessions, model, endpoint and index state."
  (interactive)
  (agentls--execute
   "agentls.status" (make-hash-table)
   (lambda (result)
     (with-current-buffer (get-buffer-create "*agentls-status*")
       (let ((inhibit-read-only t))
         (erase-buffer)
         (insert (pp-to-string result)))
       (display-buffer (current-buffer))))))

;;;###autoload
(defun agentls-transcript (&optional file)
  "Show the live log.
With a prefix argument (FILE), open the last run's transcript file."
  (interactive "P")
  (if file
      (let ((transcript (plist-get (gethash agentls-last-session agentls--sessions) :transcript)))
        (unless transcript (user-error "agentls: no transcript yet"))
        (find-file-other-window (if (string-prefix-p "file://" transcript)
                                    (agentls--path transcript)
                                  transcript)))
    (display-buffer (get-buffer-create agentls-log-buffer))))

;;;; Reviewing staged edits

(defvar-local agentls--diff-session nil "The session *agentls-diff* shows.")
(defvar-local agentls--diff-origin nil
  "The buffer whose agentls server *agentls-diff* came from (commands go there).")

;;;###autoload
(defun agentls-diff (&optional session)
  "Show the staged edits of SESSION (default: the last one) as a diff.
Each staged file: what the editor has now against the agent's version."
  (interactive)
  (let ((session (or session agentls-last-session)))
    (unless session
      (user-error "agentls: no session yet; start one with M-x agentls-run"))
    (let ((origin (current-buffer)))
      (agentls--execute
       "agentls.staged" (list :session session)
       (lambda (result)
         (let ((files (append (plist-get result :files) nil)))
           (if (null files)
               (progn
                 (when (get-buffer "*agentls-diff*")
                   (with-current-buffer "*agentls-diff*"
                     (let ((inhibit-read-only t))
                       (erase-buffer)
                       (insert (format "agentls: nothing staged in session %s\n" session)))))
                 (message "agentls: nothing staged in session %s" session))
             (agentls--show-diff session files (append (plist-get result :hunks) nil)
                                 origin))))))))

(defun agentls--text (value)
  "VALUE as text (JSON null and false are empty)."
  (if (stringp value) value ""))

(defun agentls--show-diff (session files &optional hunks origin)
  "Render the staged FILES of SESSION as unified diffs in *agentls-diff*.
Then each of its HUNKS, which \\[agentls-accept-hunk] and \\[agentls-reject-hunk]
decide at point (in `agentls-diff-hunk-mode'); ORIGIN is the buffer whose
server the commands go to."
  (let ((out (get-buffer-create "*agentls-diff*")))
    (with-current-buffer out
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "agentls: staged edits of session %s (M-x agentls-accept / agentls-reject)\n\n"
                        session))
        (dolist (file files)
          (let ((name (file-relative-name (agentls--path (plist-get file :uri))))
                (old (generate-new-buffer " *agentls-old*"))
                (new (generate-new-buffer " *agentls-new*")))
            (unwind-protect
                (progn
                  (with-current-buffer old (insert (agentls--text (plist-get file :current))))
                  (with-current-buffer new (insert (agentls--text (plist-get file :staged))))
                  (insert (format "=== %s (%s)\n" name (plist-get file :kind)))
                  (when (stringp (plist-get file :check))
                    ;; the file's check before review: new errors, lint, the relevant tests
                    (insert (format "checks: %s\n" (plist-get file :check))))
                  (let ((diff-buffer (diff-no-select old new '("-u") t)))
                    (insert (with-current-buffer diff-buffer
                              (buffer-substring-no-properties (point-min) (point-max))))
                    (kill-buffer diff-buffer))
                  (insert "\n"))
              (kill-buffer old)
              (kill-buffer new))))
        (agentls--insert-hunks hunks))
      (diff-mode)
      (setq agentls--diff-session session
            agentls--diff-origin (or origin agentls--diff-origin))
      (agentls-diff-hunk-mode 1)
      (goto-char (point-min)))
    (display-buffer out)))

(defvar agentls-diff-hunk-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "A" #'agentls-accept-hunk)
    (define-key map "R" #'agentls-reject-hunk)
    map)
  "Keys of `agentls-diff-hunk-mode'.")

(define-minor-mode agentls-diff-hunk-mode
  "In *agentls-diff*: A accepts, R rejects (asking why) the hunk at point."
  :keymap agentls-diff-hunk-mode-map)

(defun agentls--insert-hunks (hunks)
  "Insert HUNKS (the staged diff's, from agentls.staged), each marked with its id."
  (when hunks
    (insert "=== hunks: A accepts, R rejects the hunk at point (R asks why; the agent is told)\n")
    (dolist (hunk hunks)
      (let ((start (point)))
        (insert (format "--- hunk %d: %s (%s)\n" (plist-get hunk :id)
                        (file-relative-name (plist-get hunk :path))
                        (plist-get hunk :where)))
        (insert (plist-get hunk :diff) "\n")
        (put-text-property start (point) 'agentls-hunk (plist-get hunk :id))))))

(defun agentls--hunk-at-point ()
  "The id of the staged hunk at point in *agentls-diff*."
  (or (get-text-property (point) 'agentls-hunk)
      (user-error "agentls: no hunk at point (the hunks follow \"=== hunks\")")))

(defun agentls-accept-hunk ()
  "Apply the staged hunk at point; the rest stays staged."
  (interactive)
  (agentls--hunk-command "agentls.accept" nil))

(defun agentls-reject-hunk (reason)
  "Drop the staged hunk at point; REASON (may be empty) reaches the agent."
  (interactive (list (read-string "Reject this hunk — why (the agent is told)? ")))
  (agentls--hunk-command "agentls.reject" reason))

(defun agentls--hunk-command (command reason)
  "Run COMMAND on the hunk at point, with REASON; then show the diff again."
  (let ((id (agentls--hunk-at-point))
        (session agentls--diff-session)
        (origin agentls--diff-origin))
    (unless (buffer-live-p origin)
      (user-error "agentls: the buffer this diff came from is gone; run M-x agentls-diff again"))
    (with-current-buffer origin
      (agentls--execute
       command
       (append (list :session session :hunks (vector id))
               (when (and reason (not (string-empty-p reason))) (list :reason reason)))
       (lambda (_result)
         (when (buffer-live-p origin)
           (with-current-buffer origin (agentls-diff session))))))))

;;;; Rewind

(defun agentls--turns (session)
  "The turns of SESSION as agentls.status lists them: (:turn :prompt :files)."
  (agentls--flush (agentls--server))
  (let* ((status (jsonrpc-request
                  (agentls--server) :workspace/executeCommand
                  `(:command "agentls.status" :arguments ,(vector (make-hash-table)))))
         (entry (seq-find (lambda (s) (equal (plist-get s :id) session))
                          (append (plist-get status :sessions) nil))))
    (append (plist-get entry :history) nil)))

(defun agentls--turn-label (turn)
  "\"N. prompt — files\" for TURN (the files it changed, or \"no files\")."
  (let ((files (mapcar #'file-name-nondirectory (append (plist-get turn :files) nil))))
    (format "%d. %s — %s" (plist-get turn :turn) (plist-get turn :prompt)
            (if files (string-join files ", ") "no files"))))

;;;###autoload
(defun agentls-rewind (session turn)
  "Rewind SESSION to the end of TURN: later turns leave its history, and changes
applied since are staged in reverse (review them with `agentls-diff').
Interactively: the last session, and TURN picked from its turns (each with its
prompt and the files it changed)."
  (interactive
   (let ((session (or agentls-last-session
                      (user-error "agentls: no session yet; start one with M-x agentls-run"))))
     (let* ((turns (or (agentls--turns session)
                       (user-error "agentls: session %s has no turns yet" session)))
            (choices (mapcar (lambda (turn) (cons (agentls--turn-label turn)
                                                  (plist-get turn :turn)))
                             turns))
            (picked (completing-read "agentls: rewind to the end of turn: "
                                     choices nil t)))
       (list session (cdr (assoc picked choices))))))
  (agentls--execute
   "agentls.rewind" (list :session session :turn turn)
   (lambda (result)
     (let ((dropped (length (plist-get result :dropped)))
           (reverted (length (plist-get result :reverted))))
       (message "agentls: session %s is back at the end of turn %d (%d later turn(s) dropped%s)"
                session turn dropped
                (if (> reverted 0)
                    (format "; %d file(s) staged in reverse — M-x agentls-diff" reverted)
                  ""))))))

;;;; What became of the edits

(defconst agentls--actions
  "M-x agentls-diff to review, M-x agentls-accept to apply, M-x agentls-reject to discard"
  "The commands that act on staged edits, as the messages name them.")

(defun agentls--name (uri)
  "A short name for URI."
  (file-relative-name (agentls--path uri)))

(defun agentls--left-out (items)
  "\"file: reason\" for each left-out ITEM."
  (mapconcat (lambda (item) (format "%s: %s" (agentls--name (plist-get item :uri))
                                    (or (plist-get item :reason) "not applied")))
             items "; "))

(defun agentls--describe-edit (edit session what)
  "The message for EDIT (files, applied, left_out) of SESSION, or nil.
WHAT is `run' or `accept'.  Returns (MESSAGE . NEEDS-ACTION)."
  (let* ((files (append (plist-get edit :files) nil))
         (left (append (plist-get edit :left_out) nil))
         (applied (plist-get edit :applied))
         (names (mapconcat #'agentls--name files ", ")))
    (cond
     ((and (null files) (null left))
      (when (eq what 'accept)
        (cons (format "agentls: nothing staged in session %s" session) nil)))
     ((eq applied t)
      (if left
          (cons (format "agentls: applied %d file(s) of session %s: %s; left out (still staged): %s — %s"
                        (length files) session names (agentls--left-out left) agentls--actions)
                t)
        (cons (format "agentls: applied %d file(s) of session %s: %s" (length files) session names)
              nil)))
     ((eq applied :json-false)
      (cons (format "agentls: nothing was applied (session %s) — %s — %s" session
                    (if left (agentls--left-out left) (or (plist-get edit :reason) "refused"))
                    agentls--actions)
            t))
     (t
      (cons (format "agentls: %d file(s) staged for review in session %s: %s — %s"
                    (length files) session names agentls--actions)
            t)))))

(defun agentls--outcome (message needs-action session)
  "Show MESSAGE in the echo area and the log.
With NEEDS-ACTION, add buttons that act on SESSION's staged edits."
  (message "%s" message)
  (agentls--log (concat message "\n"))
  (when needs-action
    (with-current-buffer (get-buffer-create agentls-log-buffer)
      (let ((inhibit-read-only t))
        (goto-char (point-max))
        (insert "  ")
        (insert-text-button "[Show diff]" 'action (lambda (_) (agentls-diff session))
                            'follow-link t 'help-echo "M-x agentls-diff")
        (insert " ")
        (insert-text-button "[Accept staged]"
                            'action (lambda (_) (agentls--edit-command "agentls.accept" nil session))
                            'follow-link t 'help-echo "M-x agentls-accept")
        (insert " ")
        (insert-text-button "[Reject]"
                            'action (lambda (_) (agentls--edit-command "agentls.reject" nil session))
                            'follow-link t 'help-echo "M-x agentls-reject")
        (insert "\n")))))

(defvar agentls-last-outcome nil
  "The last outcome message shown (for tests and `agentls-status').")

(defun agentls--on-run-result (event)
  "Tell what became of a run's edits (the run_result EVENT)."
  (let* ((session (plist-get event :session_id))
         (status (plist-get event :status))
         (edit (plist-get event :edit))
         (described (and (listp edit) edit (agentls--describe-edit edit session 'run))))
    (puthash session (list :status status :running nil
                           :transcript (plist-get event :transcript))
             agentls--sessions)
    (when (and described (equal status "cancelled") (not (memq (plist-get edit :applied) '(t :json-false))))
      (setcar described (replace-regexp-in-string
                         "\\`agentls: " "agentls: the cancelled run left " (car described))))
    (cond
     ((equal status "failed")
      (agentls--outcome (format "agentls: run %s failed: %s" session
                                (or (plist-get event :error) "unknown error"))
                        nil session))
     ((and (not described) (not (equal status "completed")))
      (agentls--outcome (format "agentls: session %s %s" session
                                (or (plist-get event :outcome) status))
                        nil session)))
    (when described
      (setq agentls-last-outcome (car described))
      (agentls--outcome (car described) (cdr described) session))))

(defun agentls--on-edit-result (event)
  "Tell what an accept or reject did (the edit_result EVENT)."
  (let* ((session (plist-get event :session_id))
         (files (append (plist-get event :files) nil))
         (described
          (if (equal (plist-get event :action) "reject")
              (cons (if files
                        (format "agentls: rejected %d file(s) of session %s: %s" (length files)
                                session (mapconcat #'agentls--name files ", "))
                      (format "agentls: nothing staged in session %s" session))
                    nil)
            (agentls--describe-edit event session 'accept))))
    (when described
      (setq agentls-last-outcome (car described))
      (agentls--outcome (car described) (cdr described) session))))

;;;; The live log

(defun agentls--log (text &optional continue)
  "Append TEXT to the log buffer; with CONTINUE, on the current last line."
  (with-current-buffer (get-buffer-create agentls-log-buffer)
    (let ((inhibit-read-only t))
      (goto-char (point-max))
      (unless (or continue (bobp) (bolp)) (insert "\n"))
      (insert text))))

(defun agentls--on-event (event)
  "Render one agentls/event EVENT (a plist) and update session state."
  (let ((type (plist-get event :type))
        (session (plist-get event :session_id)))
    (when session (setq agentls-last-session session))
    (pcase type
      ("run_started" (agentls--log (format "## %s\n" session)))
      ("text_delta" (agentls--log (plist-get event :text) t))
      ("tool_started" (agentls--log (format "-> %s\n" (plist-get event :summary))))
      ("tool_finished" (agentls--log (format "%s %s (%d ms)\n"
                                             (if (eq (plist-get event :is_error) t) "x" "ok")
                                             (plist-get event :name)
                                             (round (or (plist-get event :duration_ms) 0)))))
      ("notice" (agentls--log (format "! %s\n" (plist-get event :message))))
      ("todos" (agentls--log
                (concat "todo:\n"
                        (mapconcat (lambda (todo)
                                     (format "  %s %s"
                                             (pcase (plist-get todo :status)
                                               ("completed" "[x]") ("in_progress" "[~]") (_ "[ ]"))
                                             (if (equal (plist-get todo :status) "in_progress")
                                                 (or (plist-get todo :active_form) (plist-get todo :content))
                                               (plist-get todo :content))))
                                   (append (plist-get event :todos) nil) "\n")
                        "\n")))
      ("run_finished"
       (puthash session (list :status (plist-get event :status) :running t
                              :transcript (plist-get event :transcript))
                agentls--sessions)
       (agentls--log (format "== %s\n" (plist-get event :status))))
      ("run_result" (agentls--on-run-result event))
      ("edit_result" (agentls--on-edit-result event)))))

(cl-defmethod eglot-handle-notification
  ((_server agentls-server) (_method (eql agentls/event)) &rest event)
  "Handle the agentls/event notification EVENT."
  (agentls--on-event event))

;;;; Keys

(defvar agentls-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "r" #'agentls-run)
    (define-key map "a" #'agentls-ask)
    (define-key map "f" #'agentls-fix)
    (define-key map "c" #'agentls-cancel)
    (define-key map "y" #'agentls-accept)
    (define-key map "n" #'agentls-reject)
    (define-key map "d" #'agentls-diff)
    (define-key map "w" #'agentls-rewind)
    (define-key map "t" #'agentls-transcript)
    (define-key map "s" #'agentls-status)
    map)
  "Keymap for agentls commands; bind it to a prefix, e.g. C-c a.")
(fset 'agentls-command-map agentls-command-map)

(provide 'agentls)
;;; agentls.el ends here
