package site

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/dbmark/dbmark/internal/site/sitestore"
)

const adminCookie = "dbmark_admin"

// session is the admin cookie's value: a keyed hash of the token, so the
// cookie never holds the token and changes when the token does.
func (s *Server) session() string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("session\x00" + s.cfg.AdminToken))
	return hex.EncodeToString(m.Sum(nil))
}

// csrf is the token the admin page's forms carry: tied to the session, so
// another site cannot forge it even though the cookie goes along.
func (s *Server) csrf() string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("csrf\x00" + s.session()))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) adminCookie(r *http.Request) bool {
	if s.cfg.AdminToken == "" {
		return false
	}
	c, err := r.Cookie(adminCookie)
	return err == nil && hmac.Equal([]byte(c.Value), []byte(s.session()))
}

func (s *Server) pageAdmin(w http.ResponseWriter, r *http.Request) {
	s.renderAdmin(w, r, http.StatusOK, "")
}

func (s *Server) renderAdmin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	v := struct {
		page
		Admin       bool
		Error, CSRF string
		Rows        []row
	}{page: page{Title: "Moderation"}, Error: msg}
	if s.cfg.AdminToken == "" {
		v.Error = "Moderation is off: the server has no admin token."
	}
	if s.adminCookie(r) {
		rows, _, err := s.cfg.Store.List(r.Context(), sitestore.Query{IncludeHidden: true, Limit: 200})
		if err != nil {
			s.pageFailed(w, r, err)
			return
		}
		v.Admin, v.CSRF, v.Rows = true, s.csrf(), rowsOf(rows)
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, "admin", v)
}

func (s *Server) adminLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if !s.tokenOK(r.PostFormValue("token")) {
		time.Sleep(500 * time.Millisecond) // slows guessing
		s.renderAdmin(w, r, http.StatusUnauthorized, "Wrong token.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: adminCookie, Value: s.session(), Path: "/", HttpOnly: true,
		Secure:   r.TLS != nil || s.cfg.TrustProxy && r.Header.Get("X-Forwarded-Proto") == "https",
		SameSite: http.SameSiteStrictMode, MaxAge: 8 * 3600})
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
}

func (s *Server) adminAction(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if !s.adminCookie(r) {
		s.pageError(w, r, http.StatusUnauthorized, "Unauthorized", "Sign in on /admin first.")
		return
	}
	if !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(s.csrf())) {
		s.pageError(w, r, http.StatusForbidden, "Forbidden", "The form's CSRF token is missing or wrong: reload /admin.")
		return
	}
	id := r.PathValue("id")
	var err error
	switch r.PathValue("action") {
	case "hide":
		err = s.cfg.Store.SetHidden(r.Context(), id, true)
	case "unhide":
		err = s.cfg.Store.SetHidden(r.Context(), id, false)
	case "delete":
		err = s.cfg.Store.Delete(r.Context(), id)
	default:
		s.pageError(w, r, http.StatusNotFound, "Not found", "No such action.")
		return
	}
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	s.cfg.Logger.InfoContext(r.Context(), "moderation", "id", id, "action", r.PathValue("action"))
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
}
