package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	infisical "github.com/infisical/go-sdk"
	"github.com/infisical/go-sdk/packages/models"
)

// dynamicSecretCalls makes every dynamic-secret call of the SDK against the dynamic secret DYNAMIC_SECRET, which
// the test configured at dev "/" (default TTL 1h, max TTL 2h) on a PostgreSQL server of its own. Once the lease is
// made the program waits for a line on stdin: the test signs in with the leased role meanwhile. The lease is then
// listed, read, renewed, renewed past its max TTL, revoked, and renewed once revoked: the last two are the errors
// Infisical's operator tells apart by their message (it leases anew).
func dynamicSecretCalls(client infisical.InfisicalClientInterface, projectSlug string) {
	name := os.Getenv("DYNAMIC_SECRET")
	dynamic := client.DynamicSecrets()

	listed, err := dynamic.List(infisical.ListDynamicSecretsRootCredentialsOptions{ProjectSlug: projectSlug, EnvironmentSlug: "dev", SecretPath: "/"})
	report("DynamicSecrets().List", err, sortedNames(listed, func(item models.DynamicSecret) string { return item.Name }))
	config, err := dynamic.GetByName(infisical.GetDynamicSecretRootCredentialByNameOptions{DynamicSecretName: name, ProjectSlug: projectSlug, EnvironmentSlug: "dev", SecretPath: "/"})
	report("DynamicSecrets().GetByName", err, fmt.Sprintf("%s %s default %s max %s", config.Name, config.Type, config.DefaultTTL, config.MaxTTL))

	leases := dynamic.Leases()
	data, leasedFrom, lease, err := leases.Create(infisical.CreateDynamicSecretLeaseOptions{DynamicSecretName: name, ProjectSlug: projectSlug, EnvironmentSlug: "dev", SecretPath: "/"})
	leased, _ := json.Marshal(map[string]any{
		"username":      data["DB_USERNAME"],
		"password":      data["DB_PASSWORD"],
		"leaseId":       lease.Id,
		"expireAt":      lease.ExpireAt,
		"lasts":         lease.ExpireAt.Sub(lease.CreatedAt).String(),
		"dynamicSecret": leasedFrom.Name,
	})
	report("DynamicSecrets().Leases().Create", err, string(leased))
	if err != nil {
		return
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')

	held, err := leases.List(infisical.ListDynamicSecretLeasesOptions{DynamicSecretName: name, ProjectSlug: projectSlug, EnvironmentSlug: "dev", SecretPath: "/"})
	ids := []string{}
	for _, item := range held {
		ids = append(ids, item.Id)
	}
	report("DynamicSecrets().Leases().List", err, fmt.Sprintf("%d held, the new one among them: %t", len(held), strings.Contains(strings.Join(ids, ","), lease.Id)))
	id, slug, environment, path := lease.Id, projectSlug, "dev", "/"
	got, err := leases.GetById(infisical.GetDynamicSecretLeaseByIdOptions{LeaseId: id, ProjectSlug: slug, EnvironmentSlug: environment, SecretPath: path})
	report("DynamicSecrets().Leases().GetById", err, fmt.Sprintf("same lease: %t, of %s", got.Id == lease.Id, got.DynamicSecret.Name))
	renewed, err := leases.RenewById(infisical.RenewDynamicSecretLeaseOptions{LeaseId: id, TTL: "30m", ProjectSlug: slug, EnvironmentSlug: environment, SecretPath: path})
	report("DynamicSecrets().Leases().RenewById", err, "expiry moved by "+renewed.ExpireAt.Sub(lease.ExpireAt).String())
	_, err = leases.RenewById(infisical.RenewDynamicSecretLeaseOptions{LeaseId: id, TTL: "1h", ProjectSlug: slug, EnvironmentSlug: environment, SecretPath: path})
	report("DynamicSecrets().Leases().RenewById(past the max TTL)", err, "")
	revoked, err := leases.DeleteById(infisical.DeleteDynamicSecretLeaseOptions{LeaseId: id, ProjectSlug: slug, EnvironmentSlug: environment, SecretPath: path})
	report("DynamicSecrets().Leases().DeleteById", err, fmt.Sprintf("same lease: %t", revoked.Id == lease.Id))
	_, err = leases.RenewById(infisical.RenewDynamicSecretLeaseOptions{LeaseId: id, ProjectSlug: slug, EnvironmentSlug: environment, SecretPath: path})
	report("DynamicSecrets().Leases().RenewById(a revoked lease)", err, "")
}
