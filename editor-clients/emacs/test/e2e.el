;;; e2e.el --- agentls.el end to end in a real `emacs -batch'  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by tests/test_editor_emacs.py, not by hand.  Env: AGENTLS_E2E_WORKSPACE (a copy of
;; the Neovim fixture), AGENTLS_E2E_RESULT (JSON written here), AGENTLS_E2E_CMD (server
;; command, JSON list); the scripted model's URL arrives in ANTHROPIC_BASE_URL.
;; Starts eglot with agentls, runs `agentls-run' on hello.py, waits for the run to end,
;; `agentls-accept's the staged edits and checks the buffer text.

;;; Code:

(require 'json)
(require 'agentls)

(defvar e2e-steps nil)
(defvar e2e-start (float-time))
(defconst e2e-expected
  "def welcome(name):\n    return \"Hello, \" + name\n\n\nprint(welcome(\"world\"))\n")

(defun e2e-step (name)
  "Record step NAME with its time."
  (push (list :name name :ms (round (* 1000 (- (float-time) e2e-start)))) e2e-steps))

(defun e2e-wait (what seconds predicate)
  "Pump process output until PREDICATE holds (WHAT, at most SECONDS)."
  (let ((deadline (+ (float-time) seconds)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out after %ss waiting for %s" seconds what))
      (accept-process-output nil 0.05))
    (e2e-step what)))

(defun e2e-finish (ok &rest extra)
  "Write the result (OK plus EXTRA plist) and exit."
  (with-temp-file (getenv "AGENTLS_E2E_RESULT")
    (insert (json-encode (append (list :ok (if ok t :json-false)
                                       :emacs emacs-version
                                       :steps (vconcat (reverse e2e-steps)))
                                 extra))))
  (kill-emacs (if ok 0 1)))

(defun e2e-run ()
  "The test."
  (let* ((workspace (file-name-as-directory (getenv "AGENTLS_E2E_WORKSPACE")))
         (file (expand-file-name "hello.py" workspace))
         (json-array-type 'list)
         (command (json-read-from-string (getenv "AGENTLS_E2E_CMD")))
         accepted)
    (setq agentls-server-command command
          agentls-major-modes '(python-mode)
          agentls-settings '(:mode "review")
          ;; eglot asks before applying server-initiated edits; batch mode can't answer.
          eglot-confirm-server-initiated-edits nil)
    (agentls-setup)
    (add-hook 'project-find-functions (lambda (_dir) (cons 'transient workspace)))
    (find-file file)
    (python-mode)
    (eglot '(python-mode) (project-current) 'agentls-server command "python")
    (e2e-wait "eglot connected" 60 (lambda () (eglot-current-server)))
    (agentls-run "Rename greet to welcome")
    (e2e-wait "session started" 60 (lambda () agentls-last-session))
    (let ((session agentls-last-session))
      (e2e-wait "run finished" 60
                (lambda () (let ((s (gethash session agentls--sessions)))
                             (and s (not (plist-get s :running))))))
      (unless (equal (plist-get (gethash session agentls--sessions) :status) "completed")
        (error "Run ended %S" (gethash session agentls--sessions)))
      (with-current-buffer (find-buffer-visiting file)
        (unless (equal (buffer-string) (replace-regexp-in-string "welcome" "greet" e2e-expected))
          (error "Buffer changed before accept: %S" (buffer-string))))
      (advice-add 'agentls--edit-command :filter-return (lambda (r) (setq accepted t) r))
      (with-current-buffer (find-buffer-visiting file) (agentls-accept))
      (e2e-wait "buffer shows the edit" 30
                (lambda () (with-current-buffer (find-buffer-visiting file)
                             (equal (buffer-string) e2e-expected))))
      ;; saved by agentls (`agentls-save-edits'): the buffer had no unsaved changes
      (e2e-wait "saved by the accept" 10
                (lambda () (equal (with-temp-buffer (insert-file-contents file) (buffer-string))
                                  e2e-expected)))
      (when (buffer-modified-p (find-buffer-visiting file))
        (error "The accepted edit left the buffer unsaved"))
      (e2e-wait "accept reported" 10
                (lambda () (string-prefix-p "agentls: applied" (or agentls-last-outcome ""))))
      (list :session session
            :accepted (if accepted t :json-false)
            :log (with-current-buffer (get-buffer-create agentls-log-buffer) (buffer-string))))))

(defun e2e-outcome-after (what seconds before)
  "Wait (WHAT, at most SECONDS) for an outcome message other than BEFORE."
  (e2e-wait what seconds (lambda () (and agentls-last-outcome
                                         (not (eq agentls-last-outcome before)))))
  agentls-last-outcome)

(defun e2e-run-and-wait (prompt)
  "Start a run with PROMPT; return its session once its result arrived."
  (let ((before agentls-last-session))
    (agentls-run prompt)
    (e2e-wait "session started" 60 (lambda () (and agentls-last-session
                                                   (not (equal agentls-last-session before)))))
    (let ((session agentls-last-session))
      (e2e-wait "run result" 60
                (lambda () (let ((s (gethash session agentls--sessions)))
                             (and s (not (plist-get s :running))))))
      session)))

(defun e2e-typing ()
  "Bug 2: accept right after typing, with eglot's idle timer slow (under load);
then a same-line conflict, reported with its reason, reviewed with `agentls-diff'."
  (let* ((workspace (file-name-as-directory (getenv "AGENTLS_E2E_WORKSPACE")))
         (file (expand-file-name "hello.py" workspace))
         (json-array-type 'list)
         (command (json-read-from-string (getenv "AGENTLS_E2E_CMD")))
         staged-message accept-message conflict-message diff-text unsaved-after-accept)
    (setq agentls-server-command command
          agentls-major-modes '(python-mode)
          agentls-settings '(:mode "review")
          eglot-confirm-server-initiated-edits nil
          eglot-send-changes-idle-time 3.0) ; a busy Emacs: didChange goes out late
    (agentls-setup)
    (add-hook 'project-find-functions (lambda (_dir) (cons 'transient workspace)))
    (find-file file)
    (python-mode)
    (eglot '(python-mode) (project-current) 'agentls-server command "python")
    (e2e-wait "eglot connected" 60 (lambda () (eglot-current-server)))
    (e2e-run-and-wait "Rename greet to welcome")
    (setq staged-message agentls-last-outcome)
    (let ((before agentls-last-outcome))
      (with-current-buffer (find-buffer-visiting file)
        (goto-char (point-min))
        (forward-line 2)
        (insert "# typed just before accepting\n")
        (agentls-accept))              ; at once: no idle time for eglot's timer
      (setq accept-message (e2e-outcome-after "accept reported" 30 before))
      ;; the user's typing was unsaved: the accepted edit leaves the buffer unsaved too
      (setq unsaved-after-accept (buffer-modified-p (find-buffer-visiting file))))
    (let ((session2 (e2e-run-and-wait "Shorten the greeting"))
          (before agentls-last-outcome))
      (with-current-buffer (find-buffer-visiting file)
        (goto-char (point-min))
        (forward-line 1)
        (delete-region (point) (line-end-position))
        (insert "    return \"Hey, \" + name")
        (agentls-accept))
      (setq conflict-message (e2e-outcome-after "conflict reported" 30 before))
      (agentls-diff session2)
      (e2e-wait "diff shown" 20 (lambda () (get-buffer "*agentls-diff*")))
      (setq diff-text (with-current-buffer "*agentls-diff*" (buffer-string))))
    (list :staged_message staged-message
          :unsaved_after_accept (if unsaved-after-accept t :json-false)
          :accept_message accept-message
          :conflict_message conflict-message
          :diff diff-text
          :buffer (with-current-buffer (find-buffer-visiting file) (buffer-string))
          :log (with-current-buffer (get-buffer-create agentls-log-buffer) (buffer-string))
          :buttons (with-current-buffer (get-buffer-create agentls-log-buffer)
                     (let (found)
                       (goto-char (point-min))
                       (while (next-button (point))
                         (goto-char (next-button (point)))
                         (push (button-label (button-at (point))) found))
                       (vconcat (nreverse found)))))))

(defun e2e-hunks ()
  "Per-hunk review in *agentls-diff*: a run renames greet (two hunks, lines 1 and 5);
R on hunk 2 rejects it with a reason, A on hunk 1 accepts it."
  (let* ((workspace (file-name-as-directory (getenv "AGENTLS_E2E_WORKSPACE")))
         (file (expand-file-name "hello.py" workspace))
         (json-array-type 'list)
         (command (json-read-from-string (getenv "AGENTLS_E2E_CMD")))
         hunks-text after-reject)
    (setq agentls-server-command command
          agentls-major-modes '(python-mode)
          agentls-settings '(:mode "review")
          eglot-confirm-server-initiated-edits nil)
    (agentls-setup)
    (add-hook 'project-find-functions (lambda (_dir) (cons 'transient workspace)))
    (find-file file)
    (python-mode)
    (eglot '(python-mode) (project-current) 'agentls-server command "python")
    (e2e-wait "eglot connected" 60 (lambda () (eglot-current-server)))
    (let ((session (e2e-run-and-wait "Rename greet")))
      (with-current-buffer (find-buffer-visiting file) (agentls-diff session))
      (e2e-wait "diff shown" 20
                (lambda () (and (get-buffer "*agentls-diff*")
                                (with-current-buffer "*agentls-diff*"
                                  (save-excursion (goto-char (point-min))
                                                  (search-forward "--- hunk 2:" nil t))))))
      (with-current-buffer "*agentls-diff*"
        (setq hunks-text (buffer-string))
        (goto-char (point-min))
        (search-forward "--- hunk 2:")
        (agentls-reject-hunk "keep the call, it is public"))
      (e2e-wait "one hunk left" 20
                (lambda () (with-current-buffer "*agentls-diff*"
                             (save-excursion
                               (goto-char (point-min))
                               (and (search-forward "--- hunk 1:" nil t)
                                    (not (search-forward "--- hunk 2:" nil t)))))))
      (with-current-buffer "*agentls-diff*"
        (setq after-reject (buffer-string))
        (goto-char (point-min))
        (search-forward "--- hunk 1:")
        (call-interactively (key-binding "A")))
      (e2e-wait "hunk 1 in the buffer" 20
                (lambda () (with-current-buffer (find-buffer-visiting file)
                             (save-excursion (goto-char (point-min))
                                             (looking-at "def welcome(name):")))))
      (with-current-buffer (find-buffer-visiting file) (save-buffer))
      ;; M-x agentls-rewind: the turns, each with its prompt and files, to pick from
      (let (turns-shown)
        (with-current-buffer (find-buffer-visiting file)
          (cl-letf (((symbol-function 'completing-read)
                     (lambda (_prompt choices &rest _)
                       (setq turns-shown (mapcar #'car choices))
                       (caar choices))))
            (call-interactively #'agentls-rewind)))
        (e2e-wait "rewound" 20
                  (lambda () (with-current-buffer (get-buffer-create "*Messages*")
                               (save-excursion (goto-char (point-min))
                                               (search-forward "is back at the end of turn 1"
                                                               nil t)))))
        (setq hunks-text (concat hunks-text "\n=== turns shown\n"
                                 (string-join turns-shown "\n"))))
      (list :session session
            :hunks hunks-text
            :after_reject after-reject
            :buffer (with-current-buffer (find-buffer-visiting file) (buffer-string))))))

(condition-case err
    (apply #'e2e-finish t (pcase (getenv "AGENTLS_E2E_CASE")
                            ("typing" (e2e-typing))
                            ("hunks" (e2e-hunks))
                            (_ (e2e-run))))
  (error (e2e-finish nil :error (error-message-string err)
                     :log (with-current-buffer (get-buffer-create agentls-log-buffer)
                            (buffer-string)))))

;;; e2e.el ends here
