// Exercises every call of github.com/infisical/go-sdk v0.8.0 against a Coffer server and
// prints one JSON line per call: {"call", "ok", "status", "detail"}. Calls Coffer does not
// offer are made too; their answer (an API error) is reported, not hidden.
//
// Settings come from the environment: COFFER_URL, CLIENT_ID, CLIENT_SECRET, PROJECT_ID,
// PROJECT_SLUG, DYNAMIC_SECRET (dynamic_secrets.go). The SDK logs nothing (SilentMode).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	infisical "github.com/infisical/go-sdk"
	"github.com/infisical/go-sdk/packages/models"
)

type result struct {
	Call   string `json:"call"`
	OK     bool   `json:"ok"`
	Status int    `json:"status,omitempty"`
	Detail string `json:"detail,omitempty"`
}

func report(call string, err error, detail string) {
	r := result{Call: call, OK: err == nil, Detail: detail}
	if err != nil {
		var apiErr *infisical.APIError
		if errors.As(err, &apiErr) {
			r.Status = apiErr.StatusCode
		}
		var notModified *infisical.NotModifiedError
		if errors.As(err, &notModified) {
			r.Status = 304
		}
		r.Detail = err.Error()
	}
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
}

func keys(secrets []infisical.Secret) string {
	names := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		names = append(names, secret.SecretKey+"="+secret.SecretValue)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func main() {
	site := os.Getenv("COFFER_URL")
	projectID := os.Getenv("PROJECT_ID")
	projectSlug := os.Getenv("PROJECT_SLUG")
	ctx := context.Background()
	client := infisical.NewInfisicalClient(ctx, infisical.Config{SiteUrl: site, SilentMode: true})

	_, err := client.Auth().UniversalAuthLogin(os.Getenv("CLIENT_ID"), os.Getenv("CLIENT_SECRET"))
	report("Auth().UniversalAuthLogin", err, "")
	if err != nil {
		os.Exit(1)
	}
	token := client.Auth().GetAccessToken()
	report("Auth().GetAccessToken", nil, fmt.Sprintf("length %d", len(token)))

	secrets := client.Secrets()
	_, err = secrets.Create(infisical.CreateSecretOptions{ProjectID: projectID, Environment: "dev", SecretKey: "GO_SDK", SecretValue: "created", SecretComment: "by the Go SDK"})
	report("Secrets().Create", err, "")
	created, err := secrets.Batch().Create(infisical.BatchCreateSecretsOptions{ProjectID: projectID, Environment: "dev", Secrets: []infisical.BatchCreateSecret{{SecretKey: "GO_BATCH_A", SecretValue: "a"}, {SecretKey: "GO_BATCH_B", SecretValue: "b"}}})
	report("Secrets().Batch().Create", err, keys(created))
	updated, err := secrets.Update(infisical.UpdateSecretOptions{ProjectID: projectID, Environment: "dev", SecretKey: "GO_SDK", NewSecretValue: "updated"})
	report("Secrets().Update", err, updated.SecretValue)
	got, err := secrets.Retrieve(infisical.RetrieveSecretOptions{ProjectID: projectID, Environment: "dev", SecretKey: "GO_SDK"})
	report("Secrets().Retrieve", err, got.SecretValue)
	bySlug, err := secrets.Retrieve(infisical.RetrieveSecretOptions{ProjectSlug: projectSlug, Environment: "dev", SecretKey: "FROM_IMPORT", IncludeImports: true})
	report("Secrets().Retrieve(ProjectSlug, IncludeImports)", err, bySlug.SecretValue)
	old, err := secrets.Retrieve(infisical.RetrieveSecretOptions{ProjectID: projectID, Environment: "dev", SecretKey: "GO_SDK", Version: 1})
	report("Secrets().Retrieve(Version)", err, old.SecretValue)
	listed, err := secrets.ListSecrets(infisical.ListSecretsOptions{ProjectID: projectID, Environment: "dev", SecretPath: "/"})
	report("Secrets().ListSecrets", err, keys(listed.Secrets))
	_, err = secrets.ListSecrets(infisical.ListSecretsOptions{ProjectID: projectID, Environment: "dev", SecretPath: "/", IfNoneMatch: listed.ETag})
	report("Secrets().ListSecrets(IfNoneMatch)", err, "")
	withImports, err := secrets.ListSecrets(infisical.ListSecretsOptions{ProjectSlug: projectSlug, Environment: "dev", IncludeImports: true, ExpandSecretReferences: true, Recursive: true})
	report("Secrets().ListSecrets(ProjectSlug, IncludeImports, Recursive)", err, keys(withImports.Secrets))
	plain, err := secrets.List(infisical.ListSecretsOptions{ProjectID: projectID, Environment: "dev"})
	report("Secrets().List", err, keys(plain))
	deleted, err := secrets.Delete(infisical.DeleteSecretOptions{ProjectID: projectID, Environment: "dev", SecretKey: "GO_SDK"})
	report("Secrets().Delete", err, deleted.SecretKey)

	folders := client.Folders()
	folder, err := folders.Create(infisical.CreateFolderOptions{ProjectID: projectID, Environment: "dev", Name: "go-folder", Path: "/"})
	report("Folders().Create", err, folder.Name)
	listedFolders, err := folders.List(infisical.ListFoldersOptions{ProjectID: projectID, Environment: "dev", Path: "/"})
	report("Folders().List", err, sortedNames(listedFolders, func(f models.Folder) string { return f.Name }))
	renamed, err := folders.Update(infisical.UpdateFolderOptions{FolderID: folder.ID, ProjectID: projectID, Environment: "dev", NewName: "go-renamed", Path: "/"})
	report("Folders().Update", err, renamed.Name)
	removed, err := folders.Delete(infisical.DeleteFolderOptions{FolderName: "go-renamed", ProjectID: projectID, Environment: "dev", Path: "/"})
	report("Folders().Delete", err, removed.Name)

	// The token's TTL is a few seconds: within 5 s of its end the SDK renews it (POST /v1/auth/token/renew).
	time.Sleep(time.Duration(envInt("RENEW_AFTER_MS", 0)) * time.Millisecond)
	_, err = secrets.List(infisical.ListSecretsOptions{ProjectID: projectID, Environment: "dev"})
	report("automatic token renewal, then Secrets().List", err, "")
	token = client.Auth().GetAccessToken()

	dynamicSecretCalls(client, projectSlug)
	// Calls for Infisical features Coffer does not offer: their answer is reported.
	_, err = client.Kms().Keys().GetByName(infisical.KmsGetKeyByNameOptions{KeyName: "none", ProjectId: projectID})
	report("Kms().Keys().GetByName", err, "")
	// JWT Auth: the identity is configured with the test's public key; JWT is signed with its private key
	jwtToken, err := client.Auth().JwtAuthLogin(os.Getenv("JWT_IDENTITY_ID"), os.Getenv("JWT"))
	report("Auth().JwtAuthLogin", err, fmt.Sprintf("length %d", len(jwtToken.AccessToken)))
	if err == nil {
		secrets, err := client.Secrets().List(infisical.ListSecretsOptions{ProjectID: projectID, Environment: "dev", SecretPath: "/"})
		report("Auth().JwtAuthLogin, then Secrets().List", err, keys(secrets))
	}
	_, err = client.Auth().JwtAuthLogin(os.Getenv("JWT_IDENTITY_ID"), "not-a-jwt")
	report("Auth().JwtAuthLogin(a malformed JWT)", err, "")
	// Kubernetes Auth needs a cluster's TokenReview (test/cluster/workload-login.test.ts); here: an identity without it is refused
	_, err = client.Auth().KubernetesRawServiceAccountTokenLogin("00000000-0000-0000-0000-000000000000", "not-a-token")
	report("Auth().KubernetesRawServiceAccountTokenLogin", err, "")
	client.Auth().SetAccessToken(token)

	err = client.Auth().RevokeAccessToken()
	report("Auth().RevokeAccessToken", err, "")
}

// sortedNames joins the name of each item, sorted, with commas.
func sortedNames[T any](items []T, name func(T) string) string {
	names := make([]string, 0, len(items))
	for _, item := range items {
		names = append(names, name(item))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func envInt(name string, fallback int) int {
	var value int
	if _, err := fmt.Sscanf(os.Getenv(name), "%d", &value); err != nil {
		return fallback
	}
	return value
}
